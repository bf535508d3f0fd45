"""Work started at the same instant on many threads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def all_at_once(count: int, task: Callable[[int], T]) -> list[T]:
    """Run `task(0..count-1)` on `count` threads released together by a barrier."""
    barrier = threading.Barrier(count)

    def run(i: int) -> T:
        barrier.wait()
        return task(i)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))
