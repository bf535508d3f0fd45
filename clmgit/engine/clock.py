"""Time for the engine: one `Clock` seam, and waiting for a condition with exponential backoff.

Everything that waits (stack operations, instances coming into service, drains) reads the time
and sleeps through a `Clock`, so tests run against a `FakeClock` (clmgit_sandbox.doubles) and
never sleep for real.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, TypeVar

from clmgit.errors import ApplyError
from clmgit.timestamps import now

T = TypeVar("T")


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def sleep(self, seconds: float) -> None: ...


class StopSignal(Protocol):
    """A `threading.Event` or a `multiprocessing` one (shared with forked engine workers)."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> bool: ...


class SystemClock:
    """The real clock. Given `stop`, a sleep ends as soon as it is set, raising `Cancelled`:
    every wait of the engine is a point where an interrupted run stops."""

    def __init__(self, stop: StopSignal | None = None) -> None:
        self._stop = stop

    def now(self) -> datetime:
        return now()

    def sleep(self, seconds: float) -> None:
        if self._stop is None:
            time.sleep(seconds)
        elif self._stop.wait(seconds):
            raise Cancelled("stopped: the run was interrupted")


class TimedOut(ApplyError):
    """Something the engine waited for did not happen within its time limit."""


class Cancelled(ApplyError):
    """The run was interrupted (SIGINT, SIGTERM) while the engine waited."""


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
    fetch: Callable[[], T], done: Callable[[T], bool], *, clock: Clock, backoff: Backoff, what: str,
    on_wait: Callable[[T, float], None] = lambda result, waited: None,
) -> T:
    """Call `fetch` until `done` holds for its result, sleeping with backoff in between, and
    return that result.

    `what` completes the sentence "timed out waiting for ..." in the error raised when
    `backoff.timeout` seconds pass first. `on_wait` hears each result that is not done yet, with
    the seconds waited so far (progress).
    """
    start = clock.now()
    deadline = start + timedelta(seconds=backoff.timeout)
    delays = backoff.delays()
    while True:
        result = fetch()
        if done(result):
            return result
        on_wait(result, (clock.now() - start).total_seconds())
        remaining = (deadline - clock.now()).total_seconds()
        if remaining <= 0:
            raise TimedOut(
                f"timed out after {backoff.timeout:g}s waiting for {what}; run again later"
            )
        clock.sleep(min(next(delays), remaining))
