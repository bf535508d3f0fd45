"""Counts of the requests the emulator served, so tests can assert on the calls code made.

Typical use: `server.stats.reset()`, run a second reconcile, then `assert server.stats.writes == 0`
(no write call at all) or `server.stats.mutations == 0` (calls, but nothing changed: e.g. an
apply that was a no-op). Discovery requests are counted under the verb "discovery", requests
refused before they reach a resource (401, 413, unknown path) under "error".
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass

from clmgit_sandbox.kubeapi.messages import Response

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


@dataclass(frozen=True)
class RequestRecord:
    """One request: its Kubernetes verb, resource (`pods`, `pods/eviction`, ...), outcome."""

    verb: str
    resource: str
    namespace: str
    name: str
    code: int
    mutated: bool


class Stats:
    """Thread-safe request counters; the last `keep` requests are also kept as records."""

    def __init__(self, keep: int = 10_000) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str]] = Counter()
        self._mutations = 0
        self._records: deque[RequestRecord] = deque(maxlen=keep)

    def record(self, response: Response) -> None:
        record = RequestRecord(
            response.verb,
            response.resource,
            response.namespace,
            response.name,
            response.code,
            response.mutated,
        )
        with self._lock:
            self._counts[(record.verb, record.resource)] += 1
            self._mutations += record.mutated
            self._records.append(record)

    def count(self, verb: str | None = None, resource: str | None = None) -> int:
        """Requests with this verb and/or resource (None: any)."""
        with self._lock:
            return sum(
                n
                for (v, r), n in self._counts.items()
                if (verb is None or v == verb) and (resource is None or r == resource)
            )

    @property
    def by_verb(self) -> dict[str, int]:
        with self._lock:
            totals: Counter[str] = Counter()
            for (verb, _), n in self._counts.items():
                totals[verb] += n
            return dict(totals)

    @property
    def writes(self) -> int:
        """Requests with a write verb (create, update, patch, delete, deletecollection)."""
        return sum(self.count(verb) for verb in WRITE_VERBS)

    @property
    def mutations(self) -> int:
        """Requests that changed stored state (a new resourceVersion)."""
        with self._lock:
            return self._mutations

    @property
    def records(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._mutations = 0
            self._records.clear()
