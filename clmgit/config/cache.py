"""A bounded, thread-safe least-recently-used cache, for trees per SHA and compiled templates."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """At most `size` entries; concurrent `get_or_load` calls for one key run the loader once."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[K, threading.Lock] = {}

    def get(self, key: K) -> V | None:
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def get_or_load(self, key: K, load: Callable[[K], V]) -> V:
        hit = self.get(key)
        if hit is not None:
            return hit
        with self._lock:
            key_lock = self._loading.setdefault(key, threading.Lock())
        with key_lock:
            hit = self.get(key)  # another thread may have loaded it while this one waited
            if hit is not None:
                return hit
            try:
                value = load(key)
                self.put(key, value)
            finally:
                with self._lock:
                    self._loading.pop(key, None)
        return value
