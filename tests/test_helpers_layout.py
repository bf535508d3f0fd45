"""The tests' own layout: helpers are imported from tests/helpers/, never from a test module or
a conftest.py (pytest imports those itself, and a second import makes a second copy of their
classes), and never by a bare name that works only because pytest put a test directory on
sys.path."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent
#: Names pytest's sys.path entries would let a test import bare (`import cfn_templates`).
LOCAL = {p.stem for p in TESTS.rglob("*.py")} | {p.name for p in TESTS.rglob("*") if p.is_dir()}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "." * node.level + (node.module or "")))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return found


def is_wrong(module: str) -> bool:
    parts = module.lstrip(".").split(".")
    if module.startswith("."):
        return True  # relative: a sibling test module or conftest
    if parts[0] == "tests":
        return len(parts) < 2 or parts[1] != "helpers"
    return parts[0] in LOCAL


def test_tests_import_helpers_only_from_tests_helpers() -> None:
    wrong = [f"{path.relative_to(TESTS)}:{line}: {module}"
             for path in sorted(TESTS.rglob("*.py"))
             for line, module in imported_modules(path) if is_wrong(module)]
    assert wrong == []


def test_the_check_catches_each_way_of_importing_a_test_module() -> None:
    assert all(map(is_wrong, ["tests.conftest", "tests.promotion.test_promote", ".conftest",
                              ".corpus", "test_promote", "conftest", "gojudge"]))
    assert not any(map(is_wrong, ["tests.helpers.cli", "clmgit.cli", "pytest"]))
