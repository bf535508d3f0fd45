"""The one duration parser, under both of its rules."""

from __future__ import annotations

from datetime import timedelta

import pytest

from clmgit.durations import GO, WHOLE, format_duration, parse_duration
from clmgit.errors import ConfigError


@pytest.mark.parametrize("text,seconds", [("0", 0), ("0s", 0), ("250ms", 0.25), ("2h", 7200),
                                          ("1h30m", 5400), ("1.5h", 5400), ("1d", 86400),
                                          ("45", 45)])
def test_go_rule_reads_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text, where="x", rule=GO).total_seconds() == seconds


@pytest.mark.parametrize("value,seconds", [("24h", 86400), ("1h 30m", 5400), ("2d", 172800),
                                           (90, 90), ("90s", 90)])
def test_whole_rule_reads_channel_durations(value: object, seconds: int) -> None:
    assert parse_duration(value, where="x", rule=WHOLE).total_seconds() == seconds


@pytest.mark.parametrize("value,rule", [("soon", GO), ("5 m", GO), ("", GO), ("1.5h", WHOLE),
                                        ("250ms", WHOLE), ("h", WHOLE), (True, WHOLE)])
def test_anything_else_is_refused_naming_where(value: object, rule: object) -> None:
    with pytest.raises(ConfigError, match=r"^gates\.soak: .* is not a duration"):
        parse_duration(value, where="gates.soak", rule=rule)  # type: ignore[arg-type]  # the wrong types on purpose


@pytest.mark.parametrize("delta,text", [(timedelta(0), "0s"), (timedelta(seconds=90), "1m30s"),
                                        (timedelta(days=1, hours=2, minutes=3), "1d2h"),
                                        (timedelta(seconds=-5), "0s")])
def test_format_keeps_the_two_largest_units(delta: timedelta, text: str) -> None:
    assert format_duration(delta) == text
