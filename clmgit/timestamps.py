"""Timestamps as clmgit writes and reads them: RFC 3339 in UTC, to the second (`...Z`); and the
one clock every decision about time reads (`now`).

`CLMGIT_NOW` (ISO 8601 with an offset) is the instant a command starts at; time runs on from it
as usual. Windows, soak, `stable_for`, health deadlines, `promoted_at` and the engine's waits
all read `now`, so a test or a demo sets the hour instead of sleeping until it comes. (Leases
stay on the system's clock: they are agreed between processes, not decided by one.)
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta

from clmgit.errors import ConfigError

NOW_VARIABLE = "CLMGIT_NOW"

#: (CLMGIT_NOW as read, the instant it names, time.monotonic() when it was read)
_anchor: tuple[str, datetime, float] | None = None


def start_clock() -> None:
    """The command starts now: `CLMGIT_NOW`, if set, is read (and checked) afresh."""
    global _anchor
    _anchor = None
    now()


def now() -> datetime:
    """The current time, aware, in UTC: the system's, or `CLMGIT_NOW`'s running on."""
    global _anchor
    text = os.environ.get(NOW_VARIABLE, "")
    if not text:
        return datetime.now(UTC)
    if _anchor is None or _anchor[0] != text:
        _anchor = (text, _parse_now(text), time.monotonic())
    return _anchor[1] + timedelta(seconds=time.monotonic() - _anchor[2])


def _parse_now(text: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ConfigError(f"{NOW_VARIABLE}={text!r} is not an ISO 8601 time with an offset, "
                          "such as 2026-03-29T01:30:00+01:00")
    return parsed.astimezone(UTC)


def format_timestamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(text: str | None) -> datetime | None:
    """An aware datetime (naive ones are taken as UTC); None for empty or malformed text."""
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
