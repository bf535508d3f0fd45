"""The leases a run holds while it works on clusters: their local deadlines, the renewal loop that
extends them, the registry writes retried for as long as a lease allows, and what a holder still
has to record from an earlier round.

A lease taken (or renewed) by a request sent at `t` is good on the registry until at least
`t + ttl` (the server counts from when it received it). The run trusts it only until
`t + ttl - margin`, the *deadline*, so that a write started just before the deadline still lands
inside the lease. The deadlines live in shared memory (`LeaseTable`): the engine, which may run in
forked worker processes, reads its cluster's deadline before every call to the cloud or the
cluster (`clmgit.engine.guard`) and stops at once when it has passed or was revoked.

`Renewal` renews every held lease every `renew_every` seconds, a small part of its lifetime, so
a renewal that fails is tried again many times before the deadline; a renewal the registry
refuses (another holder has the lease) revokes the deadline at once. A lease given up is never
renewed again: the final write takes the cluster out of the loop first, under the same lock a
renewal holds while it is in flight.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from clmgit import events
from clmgit.engine.clock import StopSignal
from clmgit.engine.guard import LeaseExpired
from clmgit.errors import ClmgitError
from clmgit.model import Cluster, ClusterStatus
from clmgit.registry import Registry, RegistryUnavailable

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class LeaseTiming:
    """How long a lease lasts and how it is kept; by default derived from `ttl` alone."""

    ttl: float
    #: Seconds between renewals (default: a fifteenth of the lifetime, 60 s of 900 s).
    renew_every: float = 0.0
    #: The deadline is this long before the lease's end on the registry (default: a sixth).
    margin: float = 0.0
    #: Longest pause between two attempts of a registry write that could not land.
    retry_max: float = 10.0

    def __post_init__(self) -> None:
        if self.renew_every <= 0:
            object.__setattr__(self, "renew_every", self.ttl / 15)
        if self.margin <= 0:
            object.__setattr__(self, "margin", self.ttl / 6)

    def deadline(self, sent: float) -> float:
        """The deadline of a lease taken or renewed by a request sent at `sent` (monotonic)."""
        return sent + self.ttl - self.margin


def lease_timing(ttl: float) -> LeaseTiming:
    """The timing for leases of `ttl` seconds; `CLMGIT_LEASE_RENEW_SECONDS` and
    `CLMGIT_LEASE_MARGIN_SECONDS` override its parts (tests and fault drills)."""
    def seconds(name: str) -> float:
        try:
            return float(os.environ.get(name, "0") or 0)
        except ValueError:
            return 0.0

    return LeaseTiming(ttl, renew_every=seconds("CLMGIT_LEASE_RENEW_SECONDS"),
                       margin=seconds("CLMGIT_LEASE_MARGIN_SECONDS"),
                       retry_max=min(10.0, ttl / 10))


def _key(cluster_id: str) -> int:
    """A cluster id as a non-zero 63-bit number, the same in every process."""
    digest = hashlib.blake2b(cluster_id.encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") >> 1) or 1


class LeaseTable:
    """Deadlines of the leases held, by cluster, in memory shared with forked engine workers.

    Only the process that made it writes; any process reads (`check`). A worker whose parent is
    gone finds no lease: the run that held them was killed, and a survivor may have them now."""

    def __init__(self, slots: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        context = multiprocessing.get_context("fork")
        self._keys: Any = context.RawArray("q", slots)
        self._deadlines: Any = context.RawArray("d", slots)
        self._owner = os.getpid()
        self._lock = threading.Lock()
        self.clock = clock

    def hold(self, cluster_id: str, deadline: float) -> None:
        key = _key(cluster_id)
        with self._lock:
            slot = self._slot(key, free=True)
            self._deadlines[slot] = deadline
            self._keys[slot] = key

    def extend(self, cluster_id: str, deadline: float) -> None:
        with self._lock:
            slot = self._slot(_key(cluster_id))
            self._deadlines[slot] = max(self._deadlines[slot], deadline)

    def revoke(self, cluster_id: str) -> None:
        """The lease is someone else's now: every check fails from here on."""
        with self._lock:
            self._deadlines[self._slot(_key(cluster_id))] = 0.0

    def drop(self, cluster_id: str) -> None:
        key = _key(cluster_id)
        with self._lock:
            keys = self._keys[:]
            if key in keys:
                self._keys[keys.index(key)] = 0

    def deadline(self, cluster_id: str) -> float:
        """The deadline, or 0 for a lease not held (revoked, dropped, never taken)."""
        key = _key(cluster_id)
        keys = self._keys[:]
        return float(self._deadlines[keys.index(key)]) if key in keys else 0.0

    def check(self, cluster_id: str) -> None:
        """Raise `LeaseExpired` unless the lease of `cluster_id` is safely held now."""
        if os.getpid() != self._owner and os.getppid() != self._owner:
            raise LeaseExpired(f"the run that held the lease of {cluster_id} is gone; stopped "
                               "before the next write")
        deadline = self.deadline(cluster_id)
        if deadline == 0.0:
            raise LeaseExpired(f"the lease of {cluster_id} was taken by another reconciler; "
                               "stopped before the next write")
        if self.clock() >= deadline:
            raise LeaseExpired(f"the lease of {cluster_id} could not be renewed in time; "
                               "stopped before the next write")

    def _slot(self, key: int, *, free: bool = False) -> int:
        keys: list[int] = self._keys[:]
        if key in keys:
            return keys.index(key)
        if not free:
            raise KeyError(key)
        if 0 not in keys:
            raise RuntimeError("more leases held than the run works on at once")
        return keys.index(0)


@dataclass
class _Lease:
    lock: threading.Lock = field(default_factory=threading.Lock)
    renewing: bool = True


class Renewal:
    """Keeps the leases of the clusters being worked on alive, on a thread of its own."""

    def __init__(self, registry: Registry, holder: str, timing: LeaseTiming, table: LeaseTable,
                 *, stop: StopSignal | None = None) -> None:
        self.registry, self.holder, self.timing, self.table = registry, holder, timing, table
        self._stop_run = stop
        self._leases: dict[str, _Lease] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lease-renewal", daemon=True)

    def __enter__(self) -> Renewal:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join()

    def acquire(self, cluster_id: str) -> Cluster | None:
        """Take the lease (the fresh record, or None if another holder has it); the deadline is
        set from when the request was sent."""
        sent = self.table.clock()
        fresh = self.registry.acquire(cluster_id, self.holder, self.timing.ttl)
        if fresh is not None:
            self.table.hold(cluster_id, self.timing.deadline(sent))
            events.emit(events.LEASE, cluster=fresh.alias or cluster_id, event="acquired")
        return fresh

    @contextmanager
    def held(self, cluster_id: str) -> Iterator[None]:
        """Renew the lease taken by `acquire` while the block runs; forget it afterwards."""
        with self._lock:
            self._leases[cluster_id] = _Lease()
        try:
            yield
        finally:
            with self._lock:
                self._leases.pop(cluster_id, None)
            self.table.drop(cluster_id)

    def stop_renewing(self, cluster_id: str) -> None:
        """Before the write that gives the lease up: no renewal is in flight or will start."""
        with self._lock:
            lease = self._leases.get(cluster_id)
        if lease is not None:
            with lease.lock:
                lease.renewing = False

    def renew_all(self) -> None:
        with self._lock:
            leases = sorted(self._leases.items())
        for cluster_id, lease in leases:
            with lease.lock:
                if lease.renewing:
                    self._renew(cluster_id, lease)

    def _renew(self, cluster_id: str, lease: _Lease) -> None:
        sent = self.table.clock()
        if sent >= self.table.deadline(cluster_id):
            return  # too late to be safe: the engine stops at its next call
        try:
            fresh = self.registry.acquire(cluster_id, self.holder, self.timing.ttl)
        except ClmgitError as e:
            log.warning("cannot renew the lease of %s (trying again): %s", cluster_id, e)
            return
        if fresh is None:
            log.warning("the lease of %s was taken by another reconciler; stopping it",
                        cluster_id)
            lease.renewing = False
            self.table.revoke(cluster_id)
            events.emit(events.LEASE, cluster=cluster_id, event="lost")
        else:
            self.table.extend(cluster_id, self.timing.deadline(sent))

    def _loop(self) -> None:
        while not self._stop.wait(self.timing.renew_every):
            self.renew_all()

    def while_leased(self, cluster_id: str, write: Callable[[], T]) -> T:
        """`write()`, tried again with backoff while the registry is unavailable, for as long as
        the lease allows; its last error when that time is over."""
        delay = min(0.5, self.timing.retry_max)
        while True:
            try:
                return write()
            except RegistryUnavailable as e:
                if self.table.clock() + delay >= self.table.deadline(cluster_id):
                    raise
                log.warning("the registry is unavailable for %s (trying again in %.1fs): %s",
                            cluster_id, delay, e)
            if self._stopped(delay):
                raise RegistryUnavailable(f"interrupted while waiting for the registry to "
                                          f"record {cluster_id}")
            delay = min(delay * 2, self.timing.retry_max)

    def _stopped(self, seconds: float) -> bool:
        if self._stop_run is None:
            time.sleep(seconds)
            return False
        return self._stop_run.wait(seconds)


@dataclass(frozen=True)
class Outcome:
    """A result the registry did not take in its round: written by the holder's next round."""

    status: ClusterStatus
    lifecycle_status: str | None
    version: str


class Unfinished:
    """Outcomes a holder still has to record, kept across the rounds of one controller."""

    def __init__(self) -> None:
        self._outcomes: dict[str, Outcome] = {}
        self._lock = threading.Lock()

    def keep(self, cluster_id: str, outcome: Outcome) -> None:
        with self._lock:
            self._outcomes[cluster_id] = outcome

    def take(self, cluster_id: str) -> Outcome | None:
        with self._lock:
            return self._outcomes.pop(cluster_id, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._outcomes)
