"""The one Jinja2 environment: strict, sandboxed, deterministic; errors name file and line;
`manifest_hash`; compiled templates are cached."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jinja2
import pytest

from clmgit.config.compiled import MAX_AGE
from clmgit.config.render import render_order
from clmgit.config.source import ConfigTree
from clmgit.config.templates import TemplateSet, template_set
from clmgit.errors import ClmgitError, TemplateError
from clmgit.machine import usable_cores


def templates(**files: str) -> TemplateSet:
    """A template set over `cluster/<name>` files (`__` in a name stands for `/`)."""
    return template_set(ConfigTree("sha", {
        f"cluster/{name.replace('__', '/')}": text.encode() for name, text in files.items()
    }))


def failure(source: str, **variables: Any) -> str:
    with pytest.raises(TemplateError) as info:
        templates(t="line one\n" + source).render("cluster/t", variables)
    return str(info.value)


def test_an_undefined_variable_names_file_and_line() -> None:
    assert failure("x: {{ foo }}\n") == "cluster/t:2: 'foo' is undefined"


def test_an_undefined_key_names_file_and_line() -> None:
    message = failure("\nx: {{ cluster.config_items.missing }}\n", cluster={"config_items": {}})
    assert message.startswith("cluster/t:3: ") and "'missing'" in message


def test_dotted_lookups_read_keys_as_jinja_does() -> None:
    """Keys are read with `.`, but a dict's own attributes (`items`, `get`) win, as in Jinja."""
    items = {"a": 1, "items": "a key", "class": "x"}
    text = templates(t="{{ d.a }} {{ d['items'] }} {{ d.class }} {{ d.items() | list | length }}"
                     ).render("cluster/t", {"d": items})
    assert text == "1 a key x 3"
    assert failure("{{ d.__class__ }}", d=items).endswith("'__class__' of 'dict' object is unsafe.")
    assert failure("{{ d.missing }}", d=items) == "cluster/t:2: 'dict object' has no attribute " \
                                                  "'missing'"


def test_using_an_undefined_value_in_a_condition_fails_too() -> None:
    assert failure("{% if nope %}x{% endif %}\n") == "cluster/t:2: 'nope' is undefined"


def test_a_syntax_error_names_file_and_line() -> None:
    message = failure("\n\n{% if %}\n")
    assert message.startswith("cluster/t:4: ")


def test_an_unclosed_block_is_a_syntax_error() -> None:
    assert failure("{% for x in y %}\n").startswith("cluster/t:")


@pytest.mark.parametrize("source", [
    "{{ ''.__class__ }}",
    "{{ cluster.__class__.__mro__ }}",
    "{{ ().__class__.__bases__[0].__subclasses__() }}",
])
def test_reaching_for_python_internals_is_a_sandbox_violation(source: str) -> None:
    message = failure(source + "\n", cluster={})
    assert message.startswith("cluster/t:2: ")
    assert "unsafe" in message


def test_templates_cannot_change_the_shared_context() -> None:
    items = {"a": "1"}
    message = failure("{{ items.update({'a': '2'}) }}\n", items=items)
    assert message.startswith("cluster/t:2: ") and "unsafe" in message
    assert items == {"a": "1"}


def test_nothing_random_is_available() -> None:
    assert "undefined" in failure("{{ lipsum() }}\n")
    assert "random" in failure("{{ [1, 2] | random }}\n")


def test_a_template_error_is_a_user_error_with_exit_code_1() -> None:
    with pytest.raises(ClmgitError) as info:
        templates(t="{{ x }}").render("cluster/t", {})
    assert info.value.exit_code == 1


def test_a_failing_helper_names_the_line_that_called_it() -> None:
    message = failure("a\nb: {{ '1Gi' | scale_quantity(0) }}\n")
    assert message == "cluster/t:3: scale_quantity: the scaling factor must be greater than 0"


def test_any_other_failure_inside_a_template_names_its_line_too() -> None:
    assert failure("{{ 1 // 0 }}\n") == (
        "cluster/t:2: ZeroDivisionError: integer division or modulo by zero")


def test_output_is_the_source_with_trailing_newline_kept() -> None:
    t = templates(a="x: {{ 1 + 1 }}\n\n", b="no newline")
    assert t.render("cluster/a", {}) == "x: 2\n\n"
    assert t.render("cluster/b", {}) == "no newline"


def test_a_file_that_is_not_utf8_is_named() -> None:
    tree = ConfigTree("sha", {"cluster/bin": b"\xff\xfe"})
    with pytest.raises(TemplateError, match="cluster/bin: is not UTF-8 text"):
        template_set(tree).render("cluster/bin", {})


def test_including_a_missing_file_names_the_including_line() -> None:
    message = failure("{% include 'cluster/nope' %}\n")
    assert message == "cluster/t:2: there is no file cluster/nope to include"


# --- manifest_hash ---------------------------------------------------------------------------


def test_manifest_hash_is_the_sha256_of_the_rendered_sibling() -> None:
    t = templates(
        m__a__deploy="hash: {{ manifest_hash('config') }}\n",
        m__a__config="value: {{ value }}\n",
    )
    expected = hashlib.sha256(b"value: 42\n").hexdigest()
    assert t.render("cluster/m/a/deploy", {"value": 42}) == f"hash: {expected}\n"
    assert t.render("cluster/m/a/deploy", {"value": 43}) != f"hash: {expected}\n"


def test_manifest_hash_reuses_a_sibling_already_rendered_in_the_pass() -> None:
    t = templates(m__a="{{ manifest_hash('b') }}", m__b="{{ v }}")
    rendered: dict[str, str] = {"cluster/m/b": "as rendered before"}
    out = t.render("cluster/m/a", {"v": 1}, rendered=rendered)
    assert out == hashlib.sha256(b"as rendered before").hexdigest()
    assert rendered["cluster/m/a"] == out


def test_manifest_hash_of_a_broken_sibling_names_the_sibling() -> None:
    t = templates(m__a="{{ manifest_hash('b') }}", m__b="\n{{ nope }}")
    with pytest.raises(TemplateError, match="^cluster/m/b:2: 'nope' is undefined$"):
        t.render("cluster/m/a", {})


@pytest.mark.parametrize(("name", "error"), [
    ("../other/x", "is not a file in cluster/m/"),
    ("sub/x", "is not a file in cluster/m/"),
    ("missing", "there is no file cluster/m/missing"),
])
def test_manifest_hash_only_hashes_existing_siblings(name: str, error: str) -> None:
    t = templates(m__a=f"\n{{{{ manifest_hash('{name}') }}}}", m__sub__x="", other__x="")
    with pytest.raises(TemplateError) as info:
        t.render("cluster/m/a", {})
    assert str(info.value).startswith("cluster/m/a:2: ")
    assert error in str(info.value)


def test_manifest_hash_refuses_to_go_round_in_a_circle() -> None:
    t = templates(m__a="{{ manifest_hash('b') }}", m__b="{{ manifest_hash('a') }}")
    with pytest.raises(TemplateError, match="circle: cluster/m/a → cluster/m/b → cluster/m/a"):
        t.render("cluster/m/a", {})


# --- caching ---------------------------------------------------------------------------------


def test_a_tree_has_one_template_set_and_compiles_each_file_once() -> None:
    tree = ConfigTree("sha", {"cluster/a": b"{{ x }}"})
    first = template_set(tree)
    assert template_set(tree) is first
    first.render("cluster/a", {"x": 1})
    assert first.env.get_template("cluster/a") is first.env.get_template("cluster/a")


def test_an_unchanged_file_is_not_compiled_again_at_another_sha(
        monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str | None] = []
    original = jinja2.Environment.compile

    def counting(self: jinja2.Environment, source: Any, name: str | None = None,
                 *args: Any, **kwargs: Any) -> Any:
        compiled.append(name)
        return original(self, source, name, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    unique = "{{ x }} unchanged 5f0c2b\n"
    old = ConfigTree("old", {"cluster/same": unique.encode(), "cluster/changed": b"1 {{ x }}"})
    new = ConfigTree("new", {"cluster/same": unique.encode(), "cluster/changed": b"2 {{ x }}"})
    for tree in (old, new):
        for path in ("cluster/same", "cluster/changed"):
            template_set(tree).render(path, {"x": 1})
    assert compiled.count("cluster/same") == 1
    assert compiled.count("cluster/changed") == 2


CHILD = """
import sys, jinja2
from clmgit.config.source import ConfigTree
from clmgit.config.compiled import use_compile_cache_dir
from clmgit.config.templates import template_set
compiled = []
original = jinja2.Environment.compile
jinja2.Environment.compile = lambda self, *a, **k: compiled.append(1) or original(self, *a, **k)
if sys.argv[1]:
    use_compile_cache_dir(sys.argv[1])
tree = ConfigTree("sha", {"cluster/t": b"{{ x }} from disk"})
print(template_set(tree).render("cluster/t", {"x": 1}), len(compiled))
"""


def child(cache: Path | str, env: dict[str, str] | None = None) -> str:
    """A new process renders one template: its output and how many templates it compiled."""
    return subprocess.run([sys.executable, "-c", CHILD, str(cache)], check=True, env=env,
                          capture_output=True, text=True).stdout.strip()


def test_a_compile_cache_dir_saves_the_next_process_compiling(tmp_path: Path) -> None:
    assert child(tmp_path / "cache") == "1 from disk 1"
    assert list((tmp_path / "cache").iterdir())
    assert child(tmp_path / "cache") == "1 from disk 0"


def test_compiled_code_is_kept_in_the_cache_directory_by_default(tmp_path: Path) -> None:
    env = {**os.environ, "CLMGIT_CACHE_DIR": str(tmp_path / "home-cache")}
    assert child("", env) == "1 from disk 1"
    assert len(list((tmp_path / "home-cache" / "templates").iterdir())) == 1
    assert child("", env) == "1 from disk 0"


def test_a_damaged_or_unwritable_cache_only_costs_a_compile(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    child(cache)
    (entry,) = cache.iterdir()
    entry.write_bytes(b"not compiled code")
    assert child(cache) == "1 from disk 1"  # compiled again, and written anew
    assert child(cache) == "1 from disk 0"
    blocked = tmp_path / "a-file"
    blocked.write_text("a file where the cache directory would be")
    assert child(blocked) == "1 from disk 1"


def test_versions_not_loaded_for_a_month_are_pruned_when_a_process_writes(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    child(cache)
    (kept,) = cache.iterdir()
    old = time.time() - MAX_AGE - 86400
    stale, leftover = cache / f"{'0' * 64}.code", cache / "x.code.123-4.tmp"
    for path in (stale, leftover):
        path.write_bytes(b"code")
        os.utime(path, (old, old))
    os.utime(kept, (old, old))
    assert child(cache) == "1 from disk 0"  # loaded: marked as used, nothing written
    assert stale.exists() and kept.stat().st_mtime > old
    child_other = CHILD.replace("from disk", "compiled anew")
    subprocess.run([sys.executable, "-c", child_other, str(cache)], check=True)
    assert kept.exists() and not stale.exists() and not leftover.exists()


AHEAD = """
import sys, time, jinja2
from clmgit.config.compiled import use_compile_cache_dir
from clmgit.config.source import ConfigTree
from clmgit.config.templates import template_set
compiled = []
original = jinja2.Environment.compile
jinja2.Environment.compile = lambda self, *a, **k: compiled.append(1) or original(self, *a, **k)
use_compile_cache_dir(sys.argv[1])
paths = [f"cluster/manifests/c{i:02}/m.yaml" for i in range(int(sys.argv[2]))]
tree = ConfigTree("sha", {p: f"{{{{ x }}}} {p}".encode() for p in paths})
templates = template_set(tree)
templates.compile_ahead(paths)
templates.compile_ahead(paths)  # once per set
deadline = time.monotonic() + 60
while len(list(__import__("pathlib").Path(sys.argv[1]).glob("*.code"))) < len(paths):
    assert time.monotonic() < deadline, "the helper did not compile everything"
    time.sleep(0.01)
out = [templates.render(p, {"x": 1}) for p in paths]
assert out == [f"1 {p}" for p in paths], out
print(len(compiled))
"""


def test_helpers_compile_ahead_into_the_cache_while_the_renderer_goes_on(tmp_path: Path) -> None:
    """A forked helper compiles a tree's templates into the cache directory: here the renderer
    waits for it, compiles nothing itself and renders the same output."""
    if usable_cores() < 2:
        pytest.skip("compiling ahead needs a second core")
    run = [sys.executable, "-c", AHEAD, str(tmp_path / "cache"), "40"]
    assert subprocess.run(run, check=True, capture_output=True, text=True).stdout == "0\n"


def test_a_small_tree_is_compiled_by_the_renderer_alone(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    run = [sys.executable, "-c", AHEAD.replace("while len", "while False and len"),
           str(tmp_path / "cache"), "10"]
    assert subprocess.run(run, check=True, capture_output=True, text=True).stdout == "10\n"


def test_render_order_is_defaults_deletions_stacks_pools_then_manifests() -> None:
    names = ["cluster/manifests/b/x.yaml", "cluster/manifests/a/y.yaml", "cluster/stack.yaml",
             "cluster/node-pools/p/stack.yaml", "cluster/config-defaults.yaml",
             "cluster/manifests/deletions.yaml", "cluster/cf-manifests/s.yaml", "cluster/README"]
    tree = ConfigTree("sha", dict.fromkeys(names, b""))
    assert render_order(tree) == [
        "cluster/config-defaults.yaml", "cluster/manifests/deletions.yaml", "cluster/stack.yaml",
        "cluster/cf-manifests/s.yaml", "cluster/node-pools/p/stack.yaml",
        "cluster/manifests/a/y.yaml", "cluster/manifests/b/x.yaml"]
