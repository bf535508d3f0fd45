"""`status` and `status --by group` fit the terminal (COLUMNS, or the terminal's width; a pipe
gets every character): free-text columns are cut with "…", a trailing "(+N more)" kept, and
`-o wide` cuts nothing."""

from __future__ import annotations

import pytest

from tests.helpers.fleet import Fleet


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.mark.parametrize("by", ["cluster", "group"])
def test_status_fits_the_terminal_and_wide_keeps_everything(
        fleet: Fleet, monkeypatch: pytest.MonkeyPatch, by: str) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    whole = fleet.cli("status", "--by", by)  # not a terminal: nothing is cut
    assert whole.code == 0, whole.err
    assert widest(whole.out) > 150 and "…" not in whole.out

    # the cluster table's fixed columns (id, alias, ...) take 120 characters of the fixture's
    monkeypatch.setenv("COLUMNS", "150" if by == "cluster" else "110")
    limit = 150 if by == "cluster" else 110
    fitted = fleet.cli("status", "--by", by)
    wide = fleet.cli("status", "--by", by, "-o", "wide")

    assert fitted.code == 0 and widest(fitted.out) <= limit, fitted.out
    assert "…" in fitted.out
    assert wide.out == whole.out  # -o wide: the table, nothing cut
    # the same rows, in the same order: only the free text is shorter
    assert [ln.split()[0] for ln in fitted.out.splitlines()] == [
        ln.split()[0] for ln in whole.out.splitlines()]


def test_a_cut_gate_keeps_its_count_of_more_refusals(
        fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "110")
    out = fleet.cli("status", "--by", "group").out
    whole = fleet.cli("status", "--by", "group", "-o", "wide").out
    counts = [ln for ln in whole.splitlines() if ln.endswith(" more)")]
    assert counts, whole
    for line in out.splitlines():
        if line.split()[:2] in [ln.split()[:2] for ln in counts]:
            assert line.endswith(" more)") and "…" in line, line
