"""Time for the engine: one `Clock` seam, and waiting for a condition with exponential backoff.

Everything that waits (stack operations, instances coming into service, drains) reads the time
and sleeps through a `Clock`, so tests run against a `FakeClock` (clmgit.sandbox.doubles) and
never sleep for real.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar

from clmgit.errors import ApplyError

T = TypeVar("T")


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class TimedOut(ApplyError):
    """Something the engine waited for did not happen within its time limit."""


@dataclass(frozen=True)
class Backoff:
    """Delays between polls: `initial`, multiplied by `factor` up to `maximum`; give up after
    `timeout` seconds in total."""

    initial: float = 5.0
    factor: float = 1.5
    maximum: float = 30.0
    timeout: float = 3600.0

    def delays(self) -> Iterator[float]:
        """The delays to sleep between polls, endlessly."""
        delay = self.initial
        while True:
            yield delay
            delay = min(delay * self.factor, self.maximum)


def wait_until(
    fetch: Callable[[], T], done: Callable[[T], bool], *, clock: Clock, backoff: Backoff, what: str
) -> T:
    """Call `fetch` until `done` holds for its result, sleeping with backoff in between, and
    return that result.

    `what` completes the sentence "timed out waiting for ..." in the error raised when
    `backoff.timeout` seconds pass first.
    """
    deadline = clock.now() + timedelta(seconds=backoff.timeout)
    delays = backoff.delays()
    while True:
        result = fetch()
        if done(result):
            return result
        remaining = (deadline - clock.now()).total_seconds()
        if remaining <= 0:
            raise TimedOut(
                f"timed out after {backoff.timeout:g}s waiting for {what}; run again later"
            )
        clock.sleep(min(next(delays), remaining))
