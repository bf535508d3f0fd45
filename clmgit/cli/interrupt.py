"""Ctrl-C (and SIGTERM) during the commands that change clusters: the first signal asks the run
to stop at its next step and says what it waits for; a second one aborts at once."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

ABORTED = 130  # the exit code a shell reports for Ctrl-C

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stoppable(on_first: Callable[[], None]) -> Iterator[Any]:
    """A stop event, shared with forked workers, that the first SIGINT or SIGTERM sets (after
    calling `on_first`); the second signal ends the process at once."""
    stop = multiprocessing.get_context("fork").Event()
    signals = 0

    def handle(signum: int, frame: FrameType | None) -> None:
        # The handler runs in the main thread between two of its bytecodes — maybe while that
        # thread holds the event's (non-reentrant) lock or stderr's, or nested in this very
        # handler for the first signal. So it takes no lock at all: it counts in a plain
        # variable, leaves setting the event and saying so to a thread of its own, and aborts
        # with a raw write and _exit.
        nonlocal signals
        signals += 1
        if signals > 1:
            os.write(2, b"aborted: clusters being worked on keep their leases until they expire\n")
            os._exit(ABORTED)
        threading.Thread(target=_first, name="stop", daemon=True).start()

    def _first() -> None:
        stop.set()
        on_first()

    previous = {sig: signal.signal(sig, handle) for sig in _SIGNALS}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
