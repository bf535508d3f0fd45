"""What the machine offers this process."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (a CI container's share, not the host's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
