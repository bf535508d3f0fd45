"""Ctrl-C (and SIGTERM) during the commands that change clusters: the first signal asks the run
to stop at its next step and says what it waits for; a second one aborts at once."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from clmgit.output import note

ABORTED = 130  # the exit code a shell reports for Ctrl-C

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stoppable(on_first: Callable[[], None]) -> Iterator[Any]:
    """A stop event, shared with forked workers, that the first SIGINT or SIGTERM sets (after
    calling `on_first`); the second signal ends the process at once."""
    stop = multiprocessing.get_context("fork").Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            note("aborted: clusters being worked on keep their leases until they expire")
            os._exit(ABORTED)
        stop.set()
        on_first()

    previous = {sig: signal.signal(sig, handle) for sig in _SIGNALS}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
