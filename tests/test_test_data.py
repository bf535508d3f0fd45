"""The tests need nothing beside the checkout: their reference data is in tests/data/, no test
names a path outside the repository, and the corpus tests skip (or, in CI, fail) with one reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.data import DATA, corpus_or_skip

TESTS = Path(__file__).parent
#: What a test reading something outside the repository would say: an absolute path of one
#: machine, or the shared reference folder beside the checkout.
OUTSIDE = re.compile(r"""["'](/work/|/home/|/tmp/clmgit)|shared["']?\s*/\s*["']?reference""")


def test_every_data_file_is_described_in_the_readme() -> None:
    readme = (DATA / "README.md").read_text()
    files = sorted(p.name for p in DATA.iterdir() if p.name != "README.md")
    assert files and [f for f in files if f"`{f}`" not in readme] == []


def test_no_test_reads_outside_the_repository() -> None:
    found = [f"{path.relative_to(TESTS)}:{n}"
             for path in sorted(TESTS.rglob("*.py")) if path != Path(__file__)
             for n, line in enumerate(path.read_text().splitlines(), 1) if OUTSIDE.search(line)]
    assert found == []


def test_the_check_sees_an_outside_path() -> None:
    assert OUTSIDE.search('Path("/work/shared/reference/x.json")')
    assert OUTSIDE.search('p / "shared" / "reference"')
    assert not OUTSIDE.search('data_path("go-gzip-vectors.json")')


def test_an_absent_corpus_skips_with_one_reason(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    monkeypatch.setenv("CLMGIT_CORPUS", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("CLMGIT_REQUIRE_CORPUS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="corpus is absent"):
        corpus_or_skip()


@pytest.mark.parametrize("variable", ["CI", "CLMGIT_REQUIRE_CORPUS"])
def test_an_absent_corpus_fails_where_it_is_required(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path, variable: str) -> None:
    monkeypatch.setenv("CLMGIT_CORPUS", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(variable, "true" if variable == "CI" else "1")
    with pytest.raises(pytest.fail.Exception, match="corpus is absent"):
        corpus_or_skip()
