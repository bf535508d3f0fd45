"""Reconcile the planned clusters: leases, the registry protocol of DESIGN.md §5, concurrency.

Per cluster that needs work: take its lease (and the record as it is now); write
`next_version` first — that is what lets a killed run resume; run the engine;
then record the result and give the lease up in one write. On success `last_version` takes the
old `current_version`, `current_version` the new one, `next_version` and `problems` are cleared;
on failure a problem is appended (at most 25) and `next_version` stays, so the next run tries
again. A dry run takes no lease and writes nothing.

Clusters in sync never reach the thread pool: they cost nothing but the plan.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Protocol

from clmgit.engine.clock import Cancelled, StopSignal
from clmgit.errors import ClmgitError
from clmgit.model import (
    MAX_PROBLEMS,
    TOO_MANY_PROBLEMS,
    Cluster,
    ClusterStatus,
    Health,
    Problem,
)
from clmgit.reconcile.plan import BLOCKED, DECOMMISSION, IN_SYNC, Target, applied_version
from clmgit.registry import DEFAULT_LEASE_SECONDS, LeaseLost, Registry, new_holder
from clmgit.timestamps import format_timestamp

log = logging.getLogger(__name__)

#: Plans a cluster again from (its plan, its record as read under the lease).
Replan = Callable[[Target, Cluster], Target]

# Outcomes of a cluster in a run.
APPLIED = "applied"
FAILED = "failed"
SKIPPED = "skipped"
PLANNED = "planned"
STOPPED = "stopped"  # the run was interrupted: lease given up, next_version kept to resume


class ClusterEngine(Protocol):
    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> _Report: ...

    def decommission(self, cluster: Cluster, *, dry_run: bool = False) -> _Report: ...


class _Report(Protocol):
    changes: list[str]


@dataclass(frozen=True)
class Result:
    id: str
    alias: str
    action: str  # the plan's: in-sync, create, update, decommission, blocked
    outcome: str  # in-sync, applied, planned, skipped, failed
    version: str = ""
    detail: str = ""
    changes: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.outcome == FAILED


@dataclass
class Reconciler:
    registry: Registry
    engine: ClusterEngine
    dry_run: bool = False
    holder: str = field(default_factory=new_holder)
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    #: Called with each cluster's result as soon as it is known (progress display).
    on_result: Callable[[Result], None] = lambda result: None
    #: Called with a cluster's id when work on it starts.
    on_start: Callable[[str], None] = lambda cluster_id: None
    now: Callable[[], datetime] = lambda: datetime.now(UTC)
    #: Plans a cluster again from its record as read under the lease (see `keep_plan`).
    replan: Replan = field(default=lambda planned, now: keep_plan(planned, now))
    #: Set: no cluster is started any more (the engine's waits stop on it too).
    stop: StopSignal | None = None
    #: Looks at a cluster's health right after its apply (clmgit.reconcile.health); the
    #: verdict is recorded with the applied version.
    observe: Callable[[Cluster], Health] | None = None

    def run(self, targets: Sequence[Target], *, concurrency: int = 4) -> list[Result]:
        """Every target, the ones needing work `concurrency` at a time; results in target order."""
        results: dict[int, Result] = {}
        work = []
        for i, target in enumerate(targets):
            if target.action in (IN_SYNC, BLOCKED):
                results[i] = self._report(_no_work(target))
            else:
                work.append((i, target))
        with _Renewal(self) as renewal, ThreadPoolExecutor(max(1, concurrency)) as pool:
            futures = {i: pool.submit(self._one, target, renewal) for i, target in work}
            for i, future in futures.items():
                results[i] = _awaited(future)
        return [results[i] for i in range(len(targets))]

    def _report(self, result: Result) -> Result:
        self.on_result(result)
        return result

    def _one(self, target: Target, renewal: _Renewal) -> Result:
        if self.stop is not None and self.stop.is_set():
            return self._report(_result(target, SKIPPED, detail="the run was interrupted"))
        self.on_start(target.cluster.id)
        started = time.monotonic()
        if self.dry_run:
            result = self._dry_run(target)
        else:
            with renewal.holding(target.cluster.id):
                result = self._apply(target)
        return self._report(replace(result, seconds=round(time.monotonic() - started, 3)))

    def _dry_run(self, target: Target) -> Result:
        cluster = target.cluster
        try:
            if target.action == DECOMMISSION:
                report = self.engine.decommission(cluster, dry_run=True)
            else:
                report = self.engine.apply(cluster, target.sha, dry_run=True)
        except ClmgitError as e:
            return _result(target, FAILED, detail=str(e))
        return _result(target, PLANNED, changes=tuple(report.changes))

    def _apply(self, target: Target) -> Result:
        cluster_id = target.cluster.id
        try:
            fresh = self.registry.acquire(cluster_id, self.holder, self.lease_seconds)
        except ClmgitError as e:  # the registry failed for this cluster: the others go on
            return _result(target, FAILED, detail=f"cannot take its lease: {e}")
        if fresh is None:
            return _result(target, SKIPPED, detail="another reconciler holds its lease")
        try:
            return self._apply_leased(target, fresh)
        except LeaseLost as e:
            return _result(target, FAILED, detail=str(e))
        except ClmgitError as e:
            # A registry write (or the re-plan's read of the channels) failed: this cluster's
            # failure. Its lease is given up if the registry lets us; else it expires.
            self._release_quietly(cluster_id)
            return _result(target, FAILED, detail=str(e))

    def _release_quietly(self, cluster_id: str) -> None:
        try:
            self.registry.record(cluster_id, self.holder, release=True)
        except ClmgitError as e:
            log.warning("cannot give up the lease of %s: %s", cluster_id, e)

    def _apply_leased(self, planned: Target, cluster: Cluster) -> Result:
        # `cluster` is the record as it is now, and the plan is made again from it: the run's
        # plan may be hours old (a decommission cancelled, a block set, a channel changed).
        target = self.replan(planned, cluster)
        if target.action in (IN_SYNC, BLOCKED):
            self.registry.record(cluster.id, self.holder, release=True)
            return _no_work(target)
        starting = replace(cluster.status, next_version=target.version)
        # The lifecycle stays `requested` until the cluster is created: CLM knows no other
        # value for a cluster in the making (it refuses `creating` as an invalid status).
        self.registry.record(cluster.id, self.holder, status=starting)
        try:
            if target.action == DECOMMISSION:
                report = self.engine.decommission(cluster)
            else:
                report = self.engine.apply(cluster, target.sha)
        except Cancelled as e:  # no problem of the cluster's: the next run resumes
            return self._finish(_result(target, STOPPED, detail=str(e)), status=starting)
        except Exception as e:  # noqa: BLE001 - one cluster's failure must not stop the others
            problem = _problem(e)
            failed = replace(starting, problems=_add_problem(starting.problems, problem))
            return self._finish(_result(target, FAILED, detail=problem.title), status=failed)
        if target.action == DECOMMISSION:
            done = replace(cluster.status, next_version="", problems=())
        else:
            done = ClusterStatus(
                current_version=target.version,
                last_version=cluster.status.current_version,
                applied_at=format_timestamp(self.now()),
            )
            done = replace(done, health=self._health(replace(cluster, status=done)))
        return self._finish(_result(target, APPLIED, changes=tuple(report.changes)),
                            status=done, lifecycle_status=target.final_lifecycle)

    def _health(self, cluster: Cluster) -> Health | None:
        """The verdict of a look right after the apply; none if looking itself failed (the
        apply stands: `clmgit health` looks again)."""
        if self.observe is None:
            return None
        try:
            return self.observe(cluster)
        except Exception:  # a look at health must never undo an apply
            log.exception("cannot observe the health of %s", cluster.id)
            return None

    def _finish(self, result: Result, *, status: ClusterStatus,
                lifecycle_status: str | None = None) -> Result:
        """Record the outcome and give the lease up; `result`, or a failure that says what
        happened and that the registry did not take it."""
        try:
            self.registry.record(result.id, self.holder, status=status,
                                 lifecycle_status=lifecycle_status, release=True)
        except LeaseLost:
            raise
        except ClmgitError as e:
            self._release_quietly(result.id)
            done = result.detail or result.outcome
            return replace(result, outcome=FAILED,
                           detail=f"{done}, but the registry did not record it: {e}")
        return result


def keep_plan(planned: Target, now: Cluster) -> Target:
    """The planned action and SHA for the record as it is now: the re-plan of a cluster named
    for one action (`provision`, a confirmed `decommission`), which no channel decides."""
    if planned.action == DECOMMISSION:
        return replace(planned, cluster=now)
    target = replace(planned, cluster=now, version=applied_version(planned.sha, now))
    if _finished_meanwhile(planned.cluster, now, target.version):
        return replace(target, action=IN_SYNC)
    return target


def _awaited(future: Future[Result]) -> Result:
    """The future's result, waited for in short turns: a signal the kernel hands to another
    thread runs its Python handler only when the main thread runs again, and a wait without a
    timeout would keep Ctrl-C from ever being heard."""
    while True:
        try:
            return future.result(timeout=0.2)
        except FuturesTimeout:
            continue


def _finished_meanwhile(planned: Cluster, now: Cluster, version: str) -> bool:
    """Another run applied `version` between the plan and the lease. (A provision of a version
    already applied is not skipped: its record showed that version when it was planned.)"""
    status = now.status
    return (status.next_version in ("", status.current_version)
            and status.current_version == version
            and planned.status.current_version != version)


def _no_work(target: Target) -> Result:
    if target.action == BLOCKED:
        return _result(target, SKIPPED, detail=target.reason)
    return _result(target, IN_SYNC)


def _result(target: Target, outcome: str, *, detail: str = "",
            changes: tuple[str, ...] = ()) -> Result:
    c = target.cluster
    return Result(c.id, c.alias, target.action, outcome, target.version, detail, changes)


def _problem(error: Exception) -> Problem:
    if isinstance(error, ClmgitError):
        kind = type(error).__name__.removesuffix("Error").lower() or "error"
        return Problem(type=f"clmgit/{kind}", title=str(error).splitlines()[0][:500],
                       detail=str(error)[:4000])
    log.exception("unexpected error")
    return Problem(type="clmgit/internal", title=f"internal error: {type(error).__name__}",
                   detail=str(error)[:4000])


def _add_problem(problems: tuple[Problem, ...], new: Problem) -> tuple[Problem, ...]:
    """As CLM keeps them: `new` appended, runs of equal problems folded into one, and past
    MAX_PROBLEMS only the newest kept, the first of them replaced by CLM's placeholder."""
    merged: list[Problem] = []
    for problem in (*problems, new):
        if not merged or merged[-1] != problem:
            merged.append(problem)
    if len(merged) > MAX_PROBLEMS:
        merged = merged[-MAX_PROBLEMS:]
        merged[0] = Problem(type=TOO_MANY_PROBLEMS, title="<multiple problems>")
    return tuple(merged)


class _Renewal:
    """Keeps the leases of the clusters being worked on alive: a background thread renews each
    one every third of its lifetime (a rolling update can take hours)."""

    def __init__(self, reconciler: Reconciler) -> None:
        self._r = reconciler
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lease-renewal", daemon=True)

    def __enter__(self) -> _Renewal:
        if not self._r.dry_run:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def holding(self, cluster_id: str) -> _Held:
        return _Held(self, cluster_id)

    def _loop(self) -> None:
        while not self._stop.wait(self._r.lease_seconds / 3):
            with self._lock:
                held = sorted(self._held)
            for cluster_id in held:
                try:
                    self._r.registry.acquire(cluster_id, self._r.holder, self._r.lease_seconds)
                except ClmgitError as e:
                    log.warning("cannot renew the lease of %s: %s", cluster_id, e)


@dataclass
class _Held:
    renewal: _Renewal
    cluster_id: str

    def __enter__(self) -> None:
        with self.renewal._lock:
            self.renewal._held.add(self.cluster_id)

    def __exit__(self, *exc: object) -> None:
        with self.renewal._lock:
            self.renewal._held.discard(self.cluster_id)
