"""One template rendered both ways: the Go original with the evaluator, the conversion with the
project's Jinja environment; and the first lines where two renderings differ."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

import jinja2

from clmgit.config.templates import make_environment
from clmgit.convert import evaluator
from clmgit.convert.emitter import to_jinja
from clmgit.convert.parser import parse

Functions = Mapping[str, Callable[..., Any]]


def jinja_environment(functions: Functions) -> jinja2.Environment:
    """The project's environment with `functions` as globals (CLM's names) and booleans printed
    as Go prints them, which the renderer does once CLM's library is registered in it."""
    env = make_environment()
    env.globals.update(functions)
    if env.finalize is None:
        env.finalize = _go_bool
    return env


def _go_bool(value: Any) -> Any:
    if value is True or value is False:
        return "true" if value else "false"
    return value


def render_go(source: str, data: Any, functions: Functions, *, name: str = "template",
              missing_key: str = "error") -> str:
    return evaluator.render(parse(source, name), data, functions, missing_key=missing_key)


def render_jinja(env: jinja2.Environment, jinja_source: str, data: Mapping[str, Any]) -> str:
    return env.from_string(jinja_source).render(**data)


def render_both(source: str, data: Mapping[str, Any], functions: Functions, *,
                name: str = "template") -> tuple[str, str]:
    """(Go's output, the converted template's output) of `source` with `data` as the dot."""
    parsed = parse(source, name)
    go = evaluator.render(parsed, data, functions)
    return go, render_jinja(jinja_environment(functions), to_jinja(parsed), data)


def first_difference(expected: str, actual: str, *, context: int = 2) -> str:
    """The first differing lines of two renderings, as a short unified diff."""
    lines = difflib.unified_diff(expected.splitlines(keepends=True),
                                 actual.splitlines(keepends=True), "go", "jinja", n=context)
    out: list[str] = []
    for line in lines:
        if line.startswith("@@") and out and any(o.startswith("@@") for o in out):
            break
        out.append(line)
    return "".join(out)
