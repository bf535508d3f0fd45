"""In-memory object storage with one resourceVersion counter, like etcd behind the API server.

Objects are plain dicts, stored per resource key (group, plural) and (namespace, name). Readers
get deep copies, so nothing outside the store can change stored state by accident. One
re-entrant lock guards everything; the API layer holds it for a whole request, which makes each
request atomic (and `revision` tells whether a request wrote anything).
"""

from __future__ import annotations

import copy
import marshal
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Key = tuple[str, str]
Obj = dict[str, Any]


def clone(obj: Obj) -> Obj:
    """A deep copy of a stored object. Objects are JSON values, which marshal copies several
    times faster than `copy.deepcopy` (the kubelet simulator reads every Pod on each sync); a
    value marshal does not know (a YAML timestamp, say) takes the general copy."""
    try:
        copied: Obj = marshal.loads(marshal.dumps(obj))
    except ValueError:
        return copy.deepcopy(obj)
    return copied

#: How many changes the store remembers for watches that resume from a resourceVersion.
HISTORY = 5000


@dataclass(frozen=True)
class Change:
    """One write, as a watch reports it: ADDED, MODIFIED or DELETED, and the object after it."""

    revision: int
    type: str
    key: Key
    obj: Obj


class Store:
    """Objects by resource key and (namespace, name), plus a uid index for owner references."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)  # notified on every write, for watches
        self.history: deque[Change] = deque(maxlen=HISTORY)
        self.closed = False  # set when the server stops: watches end
        self._objects: dict[Key, dict[tuple[str, str], Obj]] = {}
        self._uids: dict[str, tuple[Key, str, str]] = {}
        self._revision = 1000

    @property
    def revision(self) -> int:
        """The latest resourceVersion handed out."""
        return self._revision

    def get(self, key: Key, namespace: str, name: str) -> Obj | None:
        obj = self._objects.get(key, {}).get((namespace, name))
        return clone(obj) if obj is not None else None

    def list_objects(self, key: Key, namespace: str | None = None) -> list[Obj]:
        """Objects of one resource, in one namespace or all, ordered by namespace and name."""
        bucket = self._objects.get(key, {})
        return [
            clone(bucket[ident])
            for ident in sorted(bucket)
            if namespace is None or ident[0] == namespace
        ]

    def put(self, key: Key, obj: Obj) -> Obj:
        """Store `obj` under a new resourceVersion; returns the stored copy."""
        with self.lock:
            self._revision += 1
            metadata = obj["metadata"]
            metadata["resourceVersion"] = str(self._revision)
            ident = (metadata.get("namespace", ""), metadata["name"])
            bucket = self._objects.setdefault(key, {})
            kind = "MODIFIED" if ident in bucket else "ADDED"
            stored = clone(obj)
            bucket[ident] = stored
            self._uids[metadata["uid"]] = (key, *ident)
            self._record(kind, key, stored)  # shared: stored objects are replaced, never changed
            return clone(obj)

    def remove(self, key: Key, namespace: str, name: str) -> None:
        with self.lock:
            obj = self._objects.get(key, {}).pop((namespace, name), None)
            if obj is not None:
                self._revision += 1
                self._uids.pop(obj["metadata"]["uid"], None)
                # A new top level and metadata: the history's earlier events share `obj`.
                meta = {**obj["metadata"], "resourceVersion": str(self._revision)}
                self._record("DELETED", key, {**obj, "metadata": meta})

    def _record(self, kind: str, key: Key, obj: Obj) -> None:
        """Remember a change; `obj` must never be changed afterwards (watches read it)."""
        self.history.append(Change(self._revision, kind, key, obj))
        self.changed.notify_all()

    def close(self) -> None:
        """Wake every watch and tell it to end (the server is stopping)."""
        with self.lock:
            self.closed = True
            self.changed.notify_all()

    def by_uid(self, uid: str) -> tuple[Key, Obj] | None:
        where = self._uids.get(uid)
        if where is None:
            return None
        key, namespace, name = where
        obj = self.get(key, namespace, name)
        return (key, obj) if obj is not None else None

    def find(self, predicate: Callable[[Obj], bool]) -> list[tuple[Key, Obj]]:
        """Copies of the stored objects, of any resource, that satisfy `predicate`."""
        return [
            (key, clone(obj))
            for key, bucket in self._objects.items()
            for _, obj in sorted(bucket.items())
            if predicate(obj)
        ]
