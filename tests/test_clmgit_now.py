"""The injected clock (clmgit/timestamps.py:now): `CLMGIT_NOW` is where a command's time starts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from clmgit import timestamps
from clmgit.errors import ConfigError


def test_clmgit_now_is_the_start_and_time_runs_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_NOW", "2026-03-29T01:30:00+01:00")
    timestamps.start_clock()
    first = timestamps.now()
    start = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)
    assert start <= first < start + timedelta(seconds=5)
    assert first.tzinfo is UTC
    assert timestamps.now() >= first


def test_without_it_the_system_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLMGIT_NOW", raising=False)
    assert abs(timestamps.now() - datetime.now(UTC)) < timedelta(seconds=5)


@pytest.mark.parametrize("bad", ["tomorrow", "2026-03-29T01:30:00"])
def test_a_bad_value_is_one_sentence(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("CLMGIT_NOW", bad)
    with pytest.raises(ConfigError, match="is not an ISO 8601 time with an offset"):
        timestamps.start_clock()
