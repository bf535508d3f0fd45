"""The package's dependency direction, written down once and enforced (STYLE.md §11):

    cli → promotion / reconcile → workspace → versions → engine / config / registry → adapters
        → model

Every `import` of clmgit is read (module level and inside functions: lazy imports are
dependencies too; imports only for type checking are not, though they count for circles). A
wrong arrow fails with the module, line and import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "clmgit"

#: The model tier: domain values, errors and helpers that depend on nothing but each other.
MODEL = frozenset({"model", "access", "errors", "channels", "durations", "timestamps", "stacknames",
                   "yamledit", "yamlsafe", "mdtext", "cache", "httpd", "redact",
                   "machine", "layout", "healthstate", "accounts", "urls", "windows",
                   # what a running process tells: events, logs, notifications, metrics
                   "events", "logformat", "notify", "metrics", "endpoints", "service"})

#: What each part of the package may import besides itself and the model tier.
ALLOWED: dict[str, frozenset[str]] = {
    "model": frozenset(),
    "adapters": frozenset({"engine"}),  # adapters implement the engine's seams
    "registry": frozenset(),
    "config": frozenset({"adapters"}),  # reading trees at a SHA from git's object database
    "engine": frozenset({"config"}),
    # the versions port: resolve, contains, log and commit time over the sources' repositories
    "versions": frozenset({"adapters"}),
    "workspace": frozenset({"adapters", "registry", "versions"}),
    "promotion": frozenset({"workspace", "versions", "adapters", "config", "engine", "registry",
                            "signing"}),
    "reconcile": frozenset({"workspace", "adapters", "config", "engine", "registry", "signing"}),
    # which commits carry an allowed signature, as git verifies them
    "signing": frozenset({"adapters"}),
    # the fleet as a page: what status, history and diff read, laid out (as the CLI's views are)
    "report": frozenset({"promotion", "workspace", "adapters", "config", "registry"}),
    "convert": frozenset({"config", "adapters", "registry"}),  # CLM's templates brought over
    "cli": frozenset({"workspace", "promotion", "reconcile", "config", "engine",
                      "registry", "adapters", "convert", "report", "signing"}),
    "__main__": frozenset({"cli"}),
}


def part(module: str) -> str | None:
    """The part of the package a dotted module name belongs to (None: not clmgit)."""
    names = module.split(".")
    if names[0] != "clmgit":
        return None
    if len(names) == 1:
        return ""
    return "model" if names[1] in MODEL else names[1]


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) of every runtime import of `path`; `from clmgit import x` yields
    `clmgit.x`; imports under `if TYPE_CHECKING:` are skipped."""
    tree = ast.parse(path.read_text(), str(path))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "clmgit":
                yield from ((node.lineno, f"clmgit.{a.name}") for a in node.names)
            else:
                yield node.lineno, node.module


def modules() -> Iterator[tuple[Path, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        yield path, ".".join(relative.parts).removesuffix(".__init__")


def wrong_arrows() -> list[str]:
    found = []
    for path, module in modules():
        source = part(module)
        if not source:
            continue
        for line, target in imports(path):
            goes_to = part(target)
            if goes_to is None or goes_to in ("", source, "model"):
                continue
            if goes_to not in ALLOWED.get(source, frozenset()):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {source} imports "
                             f"{target}")
    return found


def test_every_import_follows_the_dependency_direction() -> None:
    assert wrong_arrows() == []


def test_clmgit_never_imports_the_sandbox_distribution() -> None:
    """clmgit_sandbox (sandbox/) is installed beside clmgit for the demo and the tests only."""
    importers = [f"{path.relative_to(PACKAGE.parent)}:{line}" for path, m in modules()
                 for line, target in imports(path) if target.split(".")[0] == "clmgit_sandbox"]
    assert importers == []


def test_the_model_tier_imports_nothing_above_it() -> None:
    above = [(m, t) for path, m in modules() if part(m) == "model"
             for _, t in imports(path) if part(t) not in (None, "", "model")]
    assert above == []


def test_promotion_and_reconcile_do_not_import_each_other() -> None:
    assert "reconcile" not in ALLOWED["promotion"] and "promotion" not in ALLOWED["reconcile"]
    assert not [a for a in wrong_arrows() if " promotion imports clmgit.reconcile" in a
                or " reconcile imports clmgit.promotion" in a]


def test_the_checker_sees_a_wrong_arrow(tmp_path: Path) -> None:
    """The checker itself: a lazy import inside a function is found, a typing-only one is not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from clmgit.cli import app\n"
        "def f():\n    from clmgit_sandbox import doubles\n    from clmgit import views\n"
    )
    assert list(imports(sample)) == [(1, "typing"), (5, "clmgit_sandbox"), (6, "clmgit.views")]
    assert part("clmgit.engine.kube") == "engine" and part("clmgit.channels") == "model"


def module_imports(path: Path, names: set[str]) -> set[str]:
    """The modules of `names` that `path` imports, at run time or only for type hints (under
    `if TYPE_CHECKING:`, which `ast.walk` enters like any block); `from clmgit.x import y`
    names the module `clmgit.x.y` when there is one."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        found: list[str] = []
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in names
                     else node.module for a in node.names]
        targets |= {t for t in found if t in names}
    return targets


def module_graph() -> dict[str, set[str]]:
    """Module → the clmgit modules it imports, at run time or only for type hints."""
    names = {m for _, m in modules()}
    return {module: module_imports(path, names) - {module} for path, module in modules()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other (strongly connected, more than one)."""
    reach: dict[str, set[str]] = {m: set() for m in graph}
    for start in graph:
        todo = list(graph[start])
        while todo:
            m = todo.pop()
            if m not in reach[start]:
                reach[start].add(m)
                todo += graph[m]
    groups = {frozenset({m, *(o for o in reach[m] if m in reach[o])}) for m in graph}
    return sorted(sorted(g) for g in groups if len(g) > 1)


def test_no_modules_import_each_other() -> None:
    """Typing-only imports count: a circle kept only for hints is still one to untie."""
    assert circles(module_graph()) == []


def test_a_typing_only_import_is_an_edge_of_the_graph(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n    from clmgit.registry import base\n")
    assert module_imports(sample, {"clmgit.registry", "clmgit.registry.base"}) == {
        "clmgit.registry.base"}


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
