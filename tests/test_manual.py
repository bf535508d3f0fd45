"""The manual stays the manual: a short README, every page of docs/ in the site's navigation,
and no citation of a document or tracker the repository does not hold. (`make docs` builds the
site with `mkdocs build --strict`, which fails on a broken link or anchor.)"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
#: What a reader without the original design file or the issue tracker could not follow.
OUTSIDE_CITATION = re.compile(r"DESIGN\.md|DESIGN §|[Ii]ssue #\d")


def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [p for value in node.values() for p in _nav_pages(value)]
    if isinstance(node, list):
        return [p for item in node for p in _nav_pages(item)]
    return []


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 200


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = _nav_pages(config["nav"])
    pages = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(nav) == pages


def test_nothing_cites_the_design_file_or_issue_numbers() -> None:
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"),
             *(ROOT / "clmgit").rglob("*.py"), *(ROOT / "sandbox").rglob("*.py")]
    found = [f"{path.relative_to(ROOT)}:{n}" for path in files
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if OUTSIDE_CITATION.search(line)]
    assert found == []


def test_the_check_sees_each_kind_of_citation() -> None:
    assert all(OUTSIDE_CITATION.search(s) for s in
               ["(DESIGN.md §6)", "as DESIGN §5 says", "(issue #31)", "Issue #28: x"])
    assert not OUTSIDE_CITATION.search("(docs/explanation/design.md)")
