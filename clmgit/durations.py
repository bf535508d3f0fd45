"""Durations as people write them in channel files (`soak: 24h`), config items
(`drain_grace_period: 1h30m`) and options (`--interval 10m`): one parser, one formatter.

The two rules differ on purpose: channel files and options take whole units up to days (`2d`,
`90s`, or a number of seconds); drain items follow Go's duration syntax as CLM reads them, with
fractions and milliseconds (`1.5h`, `250ms`) and `d` as an extension."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from clmgit.errors import ConfigError

_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Rule:
    """What a duration may look like: the units, whether numbers may have fractions, whether
    blanks may stand between the parts (`1h 30m`), and the examples an error message gives."""

    units: tuple[str, ...]
    fractions: bool
    blanks: bool
    examples: str

    @property
    def pattern(self) -> re.Pattern[str]:
        number = r"\d+(?:\.\d+)?" if self.fractions else r"\d+"
        units = "|".join(sorted(self.units, key=len, reverse=True))  # `ms` before `m`
        return re.compile(rf"({number})({units})")


#: Channel files and command-line options.
WHOLE = Rule(units=("d", "h", "m", "s"), fractions=False, blanks=True, examples="30m, 24h, 2d")
#: Drain config items: Go's time.ParseDuration (plus `d`).
GO = Rule(units=("ms", "s", "m", "h", "d"), fractions=True, blanks=False,
          examples="30s, 5m, 1h30m")


def parse_duration(value: Any, *, where: str, rule: Rule = WHOLE) -> timedelta:
    """`value` as a duration under `rule`; a bare number is seconds. Refuses anything else with
    a ConfigError that names `where`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return timedelta(seconds=value)
    text = str(value).strip()
    if rule.blanks:
        text = text.replace(" ", "")
    number = r"\d+(\.\d+)?" if rule.fractions else r"\d+"
    if re.fullmatch(number, text):
        return timedelta(seconds=float(text))
    parts = rule.pattern.findall(text)
    if text and "".join(n + u for n, u in parts) == text:
        return timedelta(seconds=sum(float(n) * _SECONDS[u] for n, u in parts))
    raise ConfigError(f"{where}: {value!r} is not a duration (use e.g. {rule.examples})")


def format_duration(delta: timedelta) -> str:
    """The two largest units of `delta`, such as `1d2h` or `5m30s`; never negative."""
    seconds = max(0, int(delta.total_seconds()))
    parts: list[str] = []
    for unit in ("d", "h", "m", "s"):
        size = int(_SECONDS[unit])
        if seconds >= size or (unit == "s" and not parts):
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(parts[:2])
