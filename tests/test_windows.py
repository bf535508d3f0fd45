"""Windows (clmgit/windows.py): the syntax, deny over allow, and the next opening across
daylight-saving changes and the year's end, checked against a minute-by-minute walk."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clmgit.errors import ConfigError
from clmgit.windows import Window, format_instant, parse_entry, parse_line, parse_window, until

BERLIN = ZoneInfo("Europe/Berlin")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def window(**raw: object) -> Window:
    w = parse_window(raw, "channels/stable.yaml: windows")
    assert w is not None
    return w


STABLE = window(timezone="Europe/Berlin", allow=["Mon-Thu 09:00-16:00"],
                deny=["12-20..01-06", "2026-11-26", "Fri 12:00-24:00"])


@pytest.mark.parametrize(("moment", "is_open"), [
    ("2026-11-23T09:00:00+01:00", True),  # Monday, the first minute
    ("2026-11-23T08:59:59+01:00", False),
    ("2026-11-23T16:00:00+01:00", False),  # the end is exclusive
    ("2026-11-23T15:00:00+00:00", False),  # 15:00 UTC is 16:00 in Berlin in November
    ("2026-11-26T10:00:00+01:00", False),  # a Thursday denied by its date
    ("2026-11-27T10:00:00+01:00", False),  # Friday: not allowed
    ("2026-12-21T10:00:00+01:00", False),  # Monday inside the yearly range
    ("2027-01-06T10:00:00+01:00", False),  # its last day is included
    ("2027-01-07T10:00:00+01:00", True),
])
def test_allow_and_deny(moment: str, is_open: bool) -> None:
    assert STABLE.is_open(at(moment)) is is_open


def test_the_next_opening_skips_denied_days_and_the_year_end() -> None:
    friday = at("2026-12-18T17:00:00+01:00")
    assert STABLE.next_opening(friday) == at("2027-01-07T09:00:00+01:00")
    assert until(STABLE, friday) == "closed until 2027-01-07T09:00+01:00"
    assert until(STABLE, at("2027-01-07T09:30:00+01:00")) == ""


def test_the_next_opening_across_the_spring_change() -> None:
    # 29 March 2026: Berlin goes from 02:00 CET to 03:00 CEST.
    nightly = parse_line("Sun 02:00-05:00 Europe/Berlin", "x")
    before = at("2026-03-29T00:30:00+01:00")
    opening = nightly.next_opening(before)
    assert opening == at("2026-03-29T03:00:00+02:00")  # 02:00 does not exist that night
    assert format_instant(opening, "Europe/Berlin") == "2026-03-29T03:00+02:00"
    # The week before, the same slot opened at 02:00 winter time.
    assert nightly.next_opening(at("2026-03-21T12:00:00+01:00")) == at(
        "2026-03-22T02:00:00+01:00")


def test_the_next_opening_across_the_autumn_change() -> None:
    # 25 October 2026: 03:00 CEST becomes 02:00 CET; 02:xx happens twice.
    short = parse_line("Sun 02:00-02:30 Europe/Berlin", "x")
    first = short.next_opening(at("2026-10-25T00:00:00+02:00"))
    assert first == at("2026-10-25T02:00:00+02:00")
    closed = at("2026-10-25T02:45:00+02:00")
    assert short.next_opening(closed) == at("2026-10-25T02:00:00+01:00")  # the second time


def test_overnight_slots_and_day_lists() -> None:
    w = parse_line("Sat,Sun 22:00-02:00", "x")
    assert w.is_open(at("2026-11-29T01:00:00+00:00"))  # Sunday 01:00: from Saturday's slot
    assert w.is_open(at("2026-11-30T01:59:00+00:00"))  # Monday 01:59: from Sunday's
    assert not w.is_open(at("2026-11-30T22:00:00+00:00"))  # Monday evening
    assert parse_line("Fri-Mon", "x").is_open(at("2026-11-30T12:00:00+00:00"))  # wraps


def test_no_allow_is_always_open_and_a_closed_window_may_never_open() -> None:
    assert window(deny=["Sat-Sun"]).is_open(at("2026-11-30T00:00:00+00:00"))
    past = window(allow=["2020-01-01"])
    assert past.next_opening(at("2026-11-30T00:00:00+00:00")) is None
    assert until(past, at("2026-11-30T00:00:00+00:00")) == "closed, and it opens no more"


@pytest.mark.parametrize(("raw", "says"), [
    ({"allow": ["Mon-Thu 9:00-16:00"]}, "'9:00-16:00' is not a time range HH:MM-HH:MM"),
    ({"allow": ["Mon-Thx 09:00-16:00"]}, "'Thx' is not a day"),
    ({"allow": ["Mon 09:00-24:30"]}, "out of range"),
    ({"allow": ["Mon 09:00-09:00"]}, "is empty"),
    ({"deny": ["02-30..03-01"]}, "not a window entry"),
    ({"deny": ["2026-13-01"]}, "not a window entry"),
    ({"timezone": "Europe/Berlim"}, "'Europe/Berlim' is not an IANA time zone"),
    ({"allow": "Mon", "weekly": True}, "unknown key 'weekly'"),
    ({"allow": {"Mon": 1}}, "must be a list of entries"),
])
def test_bad_specs_are_one_sentence(raw: dict[str, object], says: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_window(raw, "channels/stable.yaml: windows")
    message = str(e.value)
    assert says in message and message.startswith("channels/stable.yaml: windows")
    assert "\n" not in message


def test_a_line_names_its_zone_last() -> None:
    w = parse_line("Sat-Sun 02:00-05:00 Europe/Berlin", "clusters[a].maintenance_window")
    assert w.zone == "Europe/Berlin" and [e.text for e in w.allow] == ["Sat-Sun 02:00-05:00"]
    assert parse_line("Mon-Fri 02:00-04:00, Sat", "x").zone == "UTC"
    with pytest.raises(ConfigError, match="names no time"):
        parse_line("Europe/Berlin", "x")
    assert parse_entry(" Mon   09:00-10:00 ", "x").text == "Mon 09:00-10:00"


# --- the next opening against a walk, minute by minute -------------------------------------------

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"]
quarter = st.integers(0, 96).map(lambda q: q * 15)


@st.composite
def weekly(draw: st.DrawFn) -> str:
    first, length = draw(st.integers(0, 6)), draw(st.integers(0, 3))
    days = "Mon Tue Wed Thu Fri Sat Sun".split()
    spec = days[first] + (f"-{days[(first + length) % 7]}" if length else "")
    start, end = draw(quarter), draw(quarter)
    if start == end or start == 24 * 60:
        return spec
    hhmm = [f"{m // 60:02d}:{m % 60:02d}" for m in (start, end)]
    return f"{spec} {hhmm[0]}-{hhmm[1]}"


@settings(max_examples=60, deadline=None)
@given(zone=st.sampled_from(ZONES), allow=st.lists(weekly(), min_size=0, max_size=2),
       deny=st.lists(weekly(), max_size=2),
       start=st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 12, 31)))
def test_the_next_opening_is_the_first_open_minute(zone: str, allow: list[str],
                                                   deny: list[str], start: datetime) -> None:
    w = window(timezone=zone, allow=allow, deny=deny)
    begin = start.replace(second=0, microsecond=0, tzinfo=UTC)
    opening = w.next_opening(begin)
    walked = next((begin + timedelta(minutes=m) for m in range(0, 9 * 24 * 60, 15)
                   if w.is_open(begin + timedelta(minutes=m))), None)
    if walked is None:
        assert opening is None or opening > begin + timedelta(days=8)
    else:
        assert opening is not None and opening <= walked and w.is_open(opening)
        # nothing between `begin` and the opening is open (quarter hours and the minute before)
        probe = begin
        while probe < opening:
            assert not w.is_open(probe)
            probe += timedelta(minutes=15)
        assert not w.is_open(opening - timedelta(minutes=1)) or opening == begin
