"""The one Jinja2 environment: sandboxed, strict, deterministic; and rendering with errors that
name the file and line.

Templates come from a repository, not from trusted code, so the environment is an immutable
sandbox (no `__class__`, no mutating the shared context between templates) with
`StrictUndefined` (a typo fails instead of rendering empty). Globals that would make output vary
between runs (`lipsum`, the `random` filter) are removed: the same SHA and registry record must
give byte-identical output.

One `TemplateSet` exists per `ConfigTree` (per SHA) and holds each file's compiled template,
however many clusters are rendered from it; the compiled code itself is kept by path and content,
in memory and on disk (`compiled`).
"""

from __future__ import annotations

import hashlib
import posixpath
import threading
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from clmgit.config.budget import Budget, RenderStopped, checked_binop, stopped_reason
from clmgit.config.clmfuncs import GoMap, clm_functions, go_index
from clmgit.config.compiled import COMPILED, compile_ahead, fingerprint
from clmgit.config.computed import ConfigItems
from clmgit.config.gocompat import GO_COMPAT, GO_OUT
from clmgit.config.gofmt import GoStruct, output_value
from clmgit.config.helpers import HELPERS, HelperError
from clmgit.config.source import ConfigTree
from clmgit.errors import TemplateError
from clmgit.machine import usable_cores

_DICT_ATTRIBUTES = frozenset(dir(dict))
_GO_MAPS = (GoMap, ConfigItems)
_PLAIN_DICTS = (dict, GoStruct, *_GO_MAPS)


class _Environment(ImmutableSandboxedEnvironment):
    # A repeated string or a power is built in one step of C code: bounded before it is built.
    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any,
                   right: Any) -> Any:
        state = _PASS.get()
        limit = state.budget.template_bytes if state else Budget().template_bytes
        return checked_binop(operator, left, right, max_bytes=limit)

    def getattr(self, obj: Any, attribute: str) -> Any:
        """`cluster.config_items.x`, as Jinja reads it, minus an exception per lookup.

        Jinja tries the attribute first and, on AttributeError, the key. A plain dict has no
        attributes but its class's, so for any other name the key is what Jinja would return
        (or, if missing, what the fallback below reports). Thousands of lookups per cluster."""
        if type(obj) in _PLAIN_DICTS and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """`x[key]`; a key a `GoMap` lacks reads as its `ZERO`, as CLM's `index` gives it."""
        if type(obj) in _GO_MAPS and isinstance(argument, str):
            return obj.get(argument, obj.ZERO)
        return super().getitem(obj, argument)


def make_environment(loader: jinja2.BaseLoader | None = None) -> ImmutableSandboxedEnvironment:
    """The Jinja2 environment every template of the config repo is rendered in."""
    env = _Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        auto_reload=False,  # a tree at a SHA never changes
        cache_size=-1,  # the set is per tree: keep every compiled template of it
        bytecode_cache=COMPILED,
    )
    # Jinja's constant-folding pass costs about a tenth of compile time and saves nothing
    # measurable when rendering these templates.
    env.optimized = False
    env.globals.pop("lipsum", None)
    env.filters.pop("random", None)
    env.finalize = _finalize
    env.filters.update(HELPERS)
    env.globals.update(HELPERS)
    # CLM's functions under CLM's names. As globals they take CLM's argument order; as filters
    # only where Jinja has no filter of that name (`join`, `indent`, `list` stay Jinja's).
    clm = clm_functions()
    env.filters.update({name: f for name, f in clm.items() if name not in env.filters})
    env.globals.update(clm)
    # Go's `index`, which `clmgit convert` writes as a call: Go's zero value for a missing key.
    env.globals["index"] = go_index
    # Go's builtins and printing where a converted template's Jinja operators would differ.
    env.globals.update(GO_COMPAT)
    env.filters[GO_OUT] = output_value
    for name in ("manifest_hash", "manifestHash"):
        env.filters[name] = env.globals[name] = manifest_hash
    return env


def _finalize(value: Any) -> Any:
    """What `{{ … }}` prints: booleans as `true`/`false`, as CLM's Go templates print them (and
    as YAML reads them)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return value


class _TreeLoader(jinja2.BaseLoader):
    def __init__(self, tree: Mapping[str, bytes]) -> None:
        self._tree = tree

    def get_source(self, environment: jinja2.Environment,
                   template: str) -> tuple[str, str, Callable[[], bool]]:
        data = self._tree.get(template)
        if data is None:
            raise jinja2.TemplateNotFound(template)
        try:
            text = data.decode()
        except UnicodeDecodeError:
            raise TemplateError(f"{template}: is not UTF-8 text") from None
        return text, template, lambda: True


class TemplateSet:
    """The templates of one tree, compiled on first use and kept."""

    def __init__(self, tree: ConfigTree) -> None:
        self.tree = tree
        self.env = make_environment(_TreeLoader(tree))
        self._ahead = threading.Lock()
        self._ahead_started = False

    def compile_ahead(self, paths: Sequence[str]) -> None:
        """Have the other cores compile `paths` (in the order a render loads them) from the end
        while this process renders from the start; once per set (see `compiled.compile_ahead`)."""
        with self._ahead:
            if self._ahead_started:
                return
            self._ahead_started = True
        sources = []
        for path in paths:
            try:
                sources.append((path, self.tree[path].decode()))
            except (KeyError, UnicodeDecodeError):
                continue  # the render reports it
        compile_ahead(self.env, sources, helpers=usable_cores() - 1)

    def render(self, path: str, variables: Mapping[str, Any], *,
               rendered: dict[str, str] | None = None, budget: Budget | None = None) -> str:
        """`path` rendered with `variables`. `rendered` collects the output of every file
        rendered in this pass (siblings hashed by `manifest_hash` included) and is reused by
        later calls that share it, so each file renders once per pass. `budget`: the
        cluster's (else the limits per template alone); a render past it is a TemplateError
        naming the template and the limit."""
        budget = Budget.from_environment() if budget is None else budget
        # The globals (helpers) are merged in once per pass rather than once per file.
        state = _Pass(self, {**self.env.globals, **variables},
                      rendered if rendered is not None else {}, budget)
        token = _PASS.set(state)
        try:
            slot = budget.start()
            try:
                return state.render(path)
            finally:
                budget.stop(slot)
        except RenderStopped as e:
            raise TemplateError(
                f"{e.path or path}: rendering stopped: it {stopped_reason(e)}") from None
        finally:
            _PASS.reset(token)

    def _render_one(self, path: str, variables: dict[str, Any], budget: Budget) -> str:
        try:
            return self._run(path, variables, budget)
        except TemplateError:
            raise  # already names its file: a sibling's error, or a file that is not text
        except jinja2.TemplateSyntaxError as e:
            raise TemplateError(f"{e.filename or path}:{e.lineno}: {e.message}") from None
        except Exception as e:  # noqa: BLE001 - any failure of a template is the template's
            where = _where(e.__traceback__, self.tree, path)
            raise TemplateError(f"{where}: {_message(e)}") from None

    def _run(self, path: str, variables: dict[str, Any], budget: Budget) -> str:
        """`Template.render` with `variables` (globals included) shared, not copied per file,
        its output counted against `budget`."""
        template = self.env.get_template(path)
        context = template.new_context(variables, shared=True)
        try:
            return budget.collect(template.root_render_func(context))
        except Exception:  # noqa: BLE001 - rewritten to template lines and raised again
            self.env.handle_exception()


def template_set(tree: ConfigTree) -> TemplateSet:
    """The shared `TemplateSet` of a tree."""
    return tree.derived("templates", TemplateSet)


@dataclass
class _Pass:
    """A render in progress: what `manifest_hash` needs to render a sibling the same way."""

    templates: TemplateSet
    variables: dict[str, Any]  # the globals included
    rendered: dict[str, str]
    budget: Budget
    active: list[str] = field(default_factory=list)

    def render(self, path: str) -> str:
        if path in self.rendered:
            return self.rendered[path]
        self.active.append(path)
        try:
            text = self.templates._render_one(path, self.variables, self.budget)
        except RenderStopped as e:
            e.path = e.path or path  # the innermost file: a sibling's, where one was rendering
            raise
        finally:
            self.active.pop()
        self.rendered[path] = text
        return text


_PASS: ContextVar[_Pass | None] = ContextVar("clmgit_template_pass", default=None)


@jinja2.pass_context
def manifest_hash(context: jinja2.runtime.Context, name: str) -> str:
    """Hex SHA-256 of a sibling file (a path relative to this template's directory) as rendered
    with the same context — so a change in a ConfigMap's content can roll its Deployment."""
    state = _PASS.get()
    current = context.name or ""
    if state is None or not isinstance(name, str):
        raise HelperError("manifest_hash takes the name of a file beside the template")
    directory = posixpath.dirname(current)
    path = posixpath.normpath(posixpath.join(directory, name))
    if posixpath.dirname(path) != directory:
        raise HelperError(f"manifest_hash: {name!r} is not a file in {directory}/")
    if path not in state.templates.tree:
        raise HelperError(f"manifest_hash: there is no file {path}")
    if path in state.active:
        cycle = " → ".join([*state.active[state.active.index(path):], path])
        raise HelperError(f"manifest_hash goes round in a circle: {cycle}")
    return hashlib.sha256(state.render(path).encode()).hexdigest()


def _where(tb: TracebackType | None, tree: Mapping[str, bytes], default: str) -> str:
    """`file:line` of the innermost template frame of a traceback (Jinja maps its frames back to
    template lines), or the file alone if there is none."""
    where = default
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename in tree:
            where = f"{filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


def _message(e: Exception) -> str:
    if isinstance(e, jinja2.TemplateNotFound):
        return f"there is no file {e.name} to include"
    if isinstance(e, jinja2.UndefinedError | jinja2.exceptions.SecurityError | HelperError):
        return str(e)
    return f"{type(e).__name__}: {e}"


COMPILED.fingerprint = fingerprint(make_environment())
