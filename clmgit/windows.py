"""Time windows: when a channel may be promoted into, when a cluster may be changed.

A window is a time zone, `allow` entries (none: always open) and `deny` entries; deny wins over
allow. An entry is one of
- a weekly slot: days and/or times, `Mon-Thu 09:00-16:00`, `Sat,Sun`, `Fri 12:00-24:00`,
  `22:00-02:00` (an end not after the start runs into the next day; the days name the day the
  slot starts on);
- a date, `2026-11-27`, the whole day;
- a yearly range, `12-20..01-06`, whole days, both ends included, which may wrap the year end.
Times are wall-clock times in the window's zone (IANA, `zoneinfo`), so a slot follows its
zone's daylight-saving changes: `02:00-05:00` lasts three hours most nights, two on the night
the clocks go forward.

Pure: no clock is read here; callers pass the instant (`clmgit.timestamps.now`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from clmgit.errors import ConfigError

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_DAY_INDEX = {d.lower(): i for i, d in enumerate(DAYS)}
_TIME_RE = re.compile(r"^(\d\d):(\d\d)-(\d\d):(\d\d)$")
_DATE_RE = re.compile(r"^\d{4}-\d\d-\d\d$")
_YEARLY_RE = re.compile(r"^(\d\d)-(\d\d)\.\.(\d\d)-(\d\d)$")
#: How far ahead the next opening is looked for: past a whole year and a leap day, every
#: yearly and weekly pattern has repeated.
HORIZON_DAYS = 800
_DAY = 24 * 60
ENTRY_FORMS = ("days and times such as 'Mon-Thu 09:00-16:00', a date such as '2026-12-24', "
               "or a yearly range such as '12-20..01-06'")


@dataclass(frozen=True)
class Entry:
    """One allow or deny entry, as written (`text`) and as understood."""

    text: str
    #: Weekly slot: the days it starts on (0 = Monday) and minutes since midnight; end may be
    #: up to 24:00, or not after `start` (the slot runs into the next day).
    days: frozenset[int] = frozenset()
    start: int = 0
    end: int = _DAY
    on: date | None = None  # a date
    yearly: tuple[tuple[int, int], tuple[int, int]] | None = None  # (month, day) both ends

    @property
    def weekly(self) -> bool:
        return self.on is None and self.yearly is None

    def matches(self, local: datetime) -> bool:
        """Whether the entry covers the wall-clock moment `local`."""
        if self.on is not None:
            return local.date() == self.on
        if self.yearly is not None:
            (m1, d1), (m2, d2) = self.yearly
            md = (local.month, local.day)
            return (m1, d1) <= md <= (m2, d2) if (m1, d1) <= (m2, d2) else (
                md >= (m1, d1) or md <= (m2, d2))
        minute = local.hour * 60 + local.minute
        weekday = local.weekday()
        if self.start < self.end:
            return weekday in self.days and self.start <= minute < self.end
        return ((weekday in self.days and minute >= self.start)
                or ((weekday - 1) % 7 in self.days and minute < self.end))


@dataclass(frozen=True)
class Window:
    zone: str = "UTC"
    allow: tuple[Entry, ...] = ()
    deny: tuple[Entry, ...] = ()

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.zone)

    def is_open(self, when: datetime) -> bool:
        local = when.astimezone(self.tz)
        if any(e.matches(local) for e in self.deny):
            return False
        return not self.allow or any(e.matches(local) for e in self.allow)

    def next_opening(self, when: datetime) -> datetime | None:
        """`when` itself if the window is open then, else the first instant after it that it
        opens; None if it never opens again (within `HORIZON_DAYS`)."""
        if self.is_open(when):
            return when
        for candidate in self._boundaries(when):
            if candidate > when and self.is_open(candidate):
                return candidate
        return None

    def _boundaries(self, when: datetime) -> Iterator[datetime]:
        """Every instant from the day of `when` on at which an entry may begin or end, in order:
        local midnights and the entries' start and end times, each at both folds (a time the
        clocks pass twice in autumn; one they skip in spring maps past the gap)."""
        tz = self.tz
        minutes = sorted({0} | {m for e in (*self.allow, *self.deny) if e.weekly
                                for m in (e.start, e.end % _DAY)})
        first = when.astimezone(tz).date() - timedelta(days=1)
        for n in range(HORIZON_DAYS):
            day = first + timedelta(days=n)
            instants = {datetime.combine(day, time(m // 60, m % 60), tz).replace(fold=f)
                        .astimezone(UTC) for m in minutes for f in (0, 1)}
            yield from sorted(instants)

    def describe(self) -> str:
        """The window as a user wrote it: `allow Mon-Thu 09:00-16:00; deny 12-20..01-06
        (Europe/Berlin)`."""
        parts = []
        if self.allow:
            parts.append("allow " + ", ".join(e.text for e in self.allow))
        if self.deny:
            parts.append("deny " + ", ".join(e.text for e in self.deny))
        return f"{'; '.join(parts) or 'always open'} ({self.zone})"


def format_instant(when: datetime, zone: str) -> str:
    """ISO 8601 with the zone's offset at that instant, to the minute or second."""
    local = when.astimezone(ZoneInfo(zone))
    return local.isoformat(timespec="seconds" if local.second else "minutes")


def until(window: Window, when: datetime) -> str:
    """`closed until <ISO 8601>` (or `closed for good`) for a closed window; "" when open."""
    if window.is_open(when):
        return ""
    opening = window.next_opening(when)
    if opening is None:
        return "closed, and it opens no more"
    return f"closed until {format_instant(opening, window.zone)}"


# --- parsing -------------------------------------------------------------------------------------

def parse_window(raw: Any, where: str) -> Window | None:
    """The `windows:` mapping of a channel file (`timezone`, `allow`, `deny`), or one line
    (`parse_line`); None when absent."""
    if raw is None:
        return None
    if isinstance(raw, str):
        return parse_line(raw, where)
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: must be a mapping with timezone, allow and deny, or one "
                          "line such as 'Sat-Sun 02:00-05:00 Europe/Berlin'")
    unknown = sorted(set(map(str, raw)) - {"timezone", "allow", "deny"})
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: timezone, allow, deny)")
    zone = _zone(raw.get("timezone") or "UTC", where)
    return Window(zone, _entries(raw.get("allow"), f"{where}.allow"),
                  _entries(raw.get("deny"), f"{where}.deny"))


def parse_line(text: str, where: str) -> Window:
    """One line of allow entries and, last, an optional time zone: `Sat-Sun 02:00-05:00
    Europe/Berlin`, `Mon-Fri 02:00-04:00, Sat 00:00-06:00`. Entries are separated by commas
    between whole entries."""
    words = str(text).split()
    zone = "UTC"
    if words and "/" in words[-1] or words and words[-1].upper() == "UTC":
        zone = _zone(words.pop(), where)
    rest = " ".join(words)
    if not rest:
        raise ConfigError(f"{where}: {text!r} names no time; write {ENTRY_FORMS}")
    # `Mon,Wed 02:00-03:00, Sat` is two entries: a comma followed by a space ends one.
    return Window(zone, tuple(parse_entry(part, where) for part in re.split(r",\s+", rest)
                              if part.strip()))


def _entries(raw: Any, where: str) -> tuple[Entry, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, Sequence):
        raise ConfigError(f"{where}: must be a list of entries, {ENTRY_FORMS}")
    return tuple(parse_entry(item, where) for item in raw)


def _zone(name: Any, where: str) -> str:
    text = str(name)
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"{where}: {text!r} is not an IANA time zone (such as "
                          "Europe/Berlin or UTC)") from None
    return text


def parse_entry(raw: Any, where: str) -> Entry:
    """One entry; a bad one is refused with one sentence naming it and the forms known."""
    text = " ".join(str(raw).split())
    try:
        return _entry(text)
    except ValueError as e:
        detail = f" ({e})" if str(e) else ""
        raise ConfigError(
            f"{where}: {text!r} is not a window entry{detail}; write {ENTRY_FORMS}") from None


def _entry(text: str) -> Entry:
    if _DATE_RE.match(text):
        return Entry(text, on=date.fromisoformat(text))
    if m := _YEARLY_RE.match(text):
        m1, d1, m2, d2 = map(int, m.groups())
        for month, day in ((m1, d1), (m2, d2)):
            date(2024, month, day)  # a leap year: 02-29 is a day; raises ValueError if not
        return Entry(text, yearly=((m1, d1), (m2, d2)))
    words = text.split()
    if not words or len(words) > 2:
        raise ValueError("")
    days: frozenset[int] = frozenset(range(7))
    start, end = 0, _DAY
    if words[0][:1].isalpha():
        days = _days(words.pop(0))
    if words:
        start, end = _times(words.pop())
    return Entry(text, days=days, start=start, end=end)


def _days(text: str) -> frozenset[int]:
    days: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        a, b = _day(first), _day(last or first)
        days.update((a + i) % 7 for i in range((b - a) % 7 + 1))
    return frozenset(days)


def _day(name: str) -> int:
    try:
        return _DAY_INDEX[name.lower()]
    except KeyError:
        raise ValueError(f"{name!r} is not a day; days are {', '.join(DAYS)}") from None


def _times(text: str) -> tuple[int, int]:
    m = _TIME_RE.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a time range HH:MM-HH:MM")
    h1, m1, h2, m2 = map(int, m.groups())
    if h1 > 23 or m1 > 59 or h2 > 24 or m2 > 59 or (h2 == 24 and m2):
        raise ValueError(f"{text!r} has an hour or minute out of range")
    start, end = h1 * 60 + m1, h2 * 60 + m2
    if start == end:
        raise ValueError(f"{text!r} is empty; 00:00-24:00 is the whole day")
    return start, end
