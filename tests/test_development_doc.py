"""DEVELOPMENT.md names only what exists, and stays short.

Every backticked path resolves: a token with a `/` is a file or folder relative to the top of
the repository, a bare file name (`conftest.py`) is the name of some file in it. A path followed
by `:name` or `::name` (a pytest id) names something the file defines, read with `ast`: a
function, a class, a module-level variable, or `Class.member`. Every link to a file of the
repository resolves, and a link to `README.md#section` to one of its headings. When the code
moves, this test names each reference the move broke.
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "DEVELOPMENT.md"
MAX_LINES = 150

_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_CODE = re.compile(r"`([^`\n]+)`")
#: A path has no spaces, globs or placeholders, and starts as a file name does.
_PATH = re.compile(r"[\w.][\w./-]*")
_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_SUFFIX = re.compile(r"\.(py|md|toml|go|ya?ml|json|cfg|txt|sh)$")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def references(text: str) -> Iterator[tuple[str, str | None]]:
    """(path, name or None) of every backticked token that looks like a path, in order."""
    for token in _CODE.findall(_FENCE.sub("", text)):
        path, sep, name = token.replace("::", ":", 1).partition(":")
        if not _PATH.fullmatch(path) or not ("/" in path or _SUFFIX.search(path)):
            continue
        yield path, (name if sep else None)


def problems(text: str, root: Path) -> list[str]:
    """What the text names that `root` does not have, one sentence each."""
    found = []
    for path, name in references(text):
        where = _resolve(root, path)
        if where is None:
            found.append(f"`{path}` does not exist")
        elif name is not None and not _defines(where, name):
            found.append(f"`{path}` defines no `{name}`")
    for target in _LINK.findall(text):
        found += _link_problems(root, target)
    return found


def _resolve(root: Path, path: str) -> Path | None:
    if "/" in path:
        where = root / path
        return where if where.exists() else None
    return _files(root).get(path)


@cache
def _files(root: Path) -> dict[str, Path]:
    """The repository's files by name (one of each), without hidden folders (`.git`, `.venv`)
    and caches."""
    found: dict[str, Path] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in names:
            found.setdefault(name, Path(folder, name))
    return found


def _defines(path: Path, name: str) -> bool:
    if path.suffix != ".py" or not _NAME.fullmatch(name):
        return False
    body = _module(path)
    for part in name.split("."):
        node = _defined(body, part)
        if node is None:
            return False
        body = node.body if isinstance(node, ast.ClassDef) else []
    return True


@cache
def _module(path: Path) -> list[ast.stmt]:
    return ast.parse(path.read_text(), str(path)).body


def _defined(body: list[ast.stmt], name: str) -> ast.stmt | None:
    """The statement of `body` that defines `name` (looking into `if` and `try` blocks)."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return node
        elif isinstance(node, ast.If | ast.Try):
            nested = [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
            found = _defined(nested, name)
            if found is not None:
                return found
    return None


def _link_problems(root: Path, target: str) -> list[str]:
    if re.match(r"[a-z]+:", target):  # http:, https:, mailto: are not the repository's
        return []
    path, _, anchor = target.partition("#")
    file = root / path
    if not file.exists():
        return [f"link to {target} names no file"]
    if anchor and anchor not in _anchors(file.read_text()):
        return [f"link to {target}: {path} has no section #{anchor}"]
    return []


@cache
def _anchors(markdown: str) -> frozenset[str]:
    """The anchors GitHub gives the headings: lower case, punctuation dropped, spaces as `-`,
    a repeated heading numbered."""
    seen: Counter[str] = Counter()
    anchors = set()
    for heading in _HEADING.findall(_FENCE.sub("", markdown)):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchors.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return frozenset(anchors)


# -- DEVELOPMENT.md --------------------------------------------------------------------------


def test_every_path_and_name_in_development_md_resolves() -> None:
    assert problems(DOC.read_text(), ROOT) == []


def test_development_md_names_the_chains_and_seams_it_is_checked_on() -> None:
    named = list(references(DOC.read_text()))
    # A doc whose paths the checker stopped seeing would pass the test above with nothing read.
    assert len(named) > 100
    assert ("clmgit/promotion/promote.py", "plan_promotion") in named
    assert ("clmgit/reconcile/run.py", "Reconciler.run") in named


def test_development_md_is_at_most_150_lines() -> None:
    count = len(DOC.read_text().splitlines())
    assert count <= MAX_LINES, f"DEVELOPMENT.md has {count} lines; the limit is {MAX_LINES}"


# -- the checker itself, on a small repository -------------------------------------------------

SAMPLE = '''"""A module."""
import os

LIMIT = 3
TOTAL: int = 4
if os.name:
    SPARE = 5


class Plan:
    kind = "pin"

    def land(self) -> None: ...

    class Inner:
        def deep(self) -> None: ...


def plan() -> Plan:
    return Plan()


async def later() -> None: ...
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(SAMPLE)
    (tmp_path / "pkg" / "conftest.py").write_text("")
    (tmp_path / "README.md").write_text(
        "# Title\n\n## Quick start\n\n### CLM's `x` functions (`make x`)\n\n## Quick start\n"
        "```sh\n# not a heading\n```\n")
    return tmp_path


@pytest.mark.parametrize("reference", [
    "`pkg/`", "`pkg/mod.py`", "`README.md`", "`conftest.py`",
    "`pkg/mod.py:plan`", "`pkg/mod.py:later`", "`pkg/mod.py:Plan`", "`pkg/mod.py:Plan.land`",
    "`pkg/mod.py:Plan.kind`", "`pkg/mod.py:Plan.Inner.deep`", "`pkg/mod.py:LIMIT`",
    "`pkg/mod.py:TOTAL`", "`pkg/mod.py:SPARE`", "`pkg/mod.py::plan`",
    "[x](README.md)", "[x](README.md#quick-start)", "[x](README.md#quick-start-1)",
    "[x](README.md#clms-x-functions-make-x)", "[x](https://example.org/nowhere)",
    # not paths: options, commands, placeholders, dotted names, words
    "`--force`", "`make test-fast`", "`channels/<name>.yaml`", "`~/.cache/clmgit`",
    "`Registry.acquire`", "`check_…`", "`-o json|yaml`",
])
def test_the_checker_accepts_what_exists(repo: Path, reference: str) -> None:
    assert problems(f"See {reference} here.\n", repo) == []


@pytest.mark.parametrize(("reference", "problem"), [
    ("`pkg/missing.py`", "`pkg/missing.py` does not exist"),
    ("`pkg/gone/`", "`pkg/gone/` does not exist"),
    ("`absent.py`", "`absent.py` does not exist"),
    ("`pkg/mod.py:plann`", "`pkg/mod.py` defines no `plann`"),
    ("`pkg/mod.py:Plan.lands`", "`pkg/mod.py` defines no `Plan.lands`"),
    ("`pkg/mod.py:land`", "`pkg/mod.py` defines no `land`"),  # a method, not a function
    ("`pkg/mod.py:os`", "`pkg/mod.py` defines no `os`"),  # imported, not defined
    ("`pkg/mod.py:plan.x`", "`pkg/mod.py` defines no `plan.x`"),
    ("`pkg/mod.py::test_nothing`", "`pkg/mod.py` defines no `test_nothing`"),
    ("`pkg/:mod`", "`pkg/` defines no `mod`"),
    ("`pkg/mod.py:missing/gone.py`", "`pkg/mod.py` defines no `missing/gone.py`"),
    ("`nowhere/mod.py:plan`", "`nowhere/mod.py` does not exist"),
    ("[x](GUIDE.md)", "link to GUIDE.md names no file"),
    ("[x](README.md#layout)", "link to README.md#layout: README.md has no section #layout"),
    ("[x](README.md#not-a-heading)",
     "link to README.md#not-a-heading: README.md has no section #not-a-heading"),
])
def test_the_checker_names_what_does_not_exist(repo: Path, reference: str, problem: str) -> None:
    assert problems(f"See {reference} here.\n", repo) == [problem]


def test_the_checker_reports_every_wrong_reference_of_a_text(repo: Path) -> None:
    text = "`pkg/mod.py:plan` then `pkg/mod.py:nope`,\n`pkg/nope.py` and `pkg/mod.py:Plan.land`.\n"
    assert problems(text, repo) == ["`pkg/mod.py` defines no `nope`",
                                    "`pkg/nope.py` does not exist"]
