"""Waiting with exponential backoff on the fake clock."""

from __future__ import annotations

import itertools

import pytest
from clmgit_sandbox.doubles import FakeClock

from clmgit.engine.clock import Backoff, TimedOut, wait_until


def test_backoff_grows_by_its_factor_up_to_its_maximum() -> None:
    delays = Backoff(initial=2, factor=2, maximum=10).delays()

    assert list(itertools.islice(delays, 5)) == [2, 4, 8, 10, 10]


def test_wait_until_returns_the_first_result_that_is_done() -> None:
    clock = FakeClock()
    polls = iter(["PENDING", "PENDING", "PENDING", "DONE"])

    result = wait_until(lambda: next(polls), lambda s: s == "DONE", clock=clock,
                        backoff=Backoff(initial=1, factor=3, maximum=5), what="x")

    assert result == "DONE"
    assert clock.sleeps == [1, 3, 5]


def test_wait_until_gives_up_at_the_time_limit_and_says_on_what() -> None:
    clock = FakeClock()
    start = clock.now()

    with pytest.raises(TimedOut, match="after 20s waiting for the stack"):
        wait_until(lambda: "PENDING", lambda s: s == "DONE", clock=clock,
                   backoff=Backoff(initial=3, factor=2, maximum=8, timeout=20), what="the stack")
    assert clock.sleeps == [3, 6, 8, 3]
    assert (clock.now() - start).total_seconds() == 20


def test_the_fake_clock_lets_a_test_act_while_sleeping() -> None:
    seen: list[float] = []
    clock = FakeClock(on_sleep=lambda c: seen.append(c.sleeps[-1]))

    clock.sleep(5)
    clock.advance(7)

    assert seen == [5] and clock.sleeps == [5]
    assert (clock.now() - FakeClock().now()).total_seconds() == 12
