"""Reconcile the planned clusters: leases, the registry protocol (docs/explanation/reconcile.md),
concurrency.

Per cluster that needs work: take its lease (and the record as it is now); write
`next_version` first — that is what lets a killed run resume; run the engine;
then record the result and give the lease up in one write. On success `last_version` takes the
old `current_version`, `current_version` the new one, `next_version` and `problems` are cleared;
on failure a problem is appended (at most 25) and `next_version` stays, so the next run tries
again. A dry run takes no lease and writes nothing.

The lease is part of the work (`clmgit.reconcile.leases`): the engine asks its deadline before
every call to the cloud or the cluster, the renewal loop extends it, and a refused renewal stops
the cluster at once. Registry writes that cannot land (an outage) are tried again for as long as
the lease allows; an outcome the registry still did not take is kept for the holder's next round
(`Unfinished`), which finds its own lease and records it instead of applying again.

Clusters in sync never reach the thread pool: they cost nothing but the plan.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import TypeVar

from clmgit import events, timestamps
from clmgit.engine.clock import Cancelled, StopSignal
from clmgit.engine.guard import LeaseExpired
from clmgit.engine.port import ClusterEngine
from clmgit.engine.rolling import WindowClosed
from clmgit.errors import ClmgitError
from clmgit.model import (
    MAX_PROBLEMS,
    TOO_MANY_PROBLEMS,
    Cluster,
    ClusterStatus,
    Health,
    Problem,
)
from clmgit.reconcile.leases import LeaseTable, Outcome, Renewal, Unfinished, lease_timing
from clmgit.reconcile.maintenance import IGNORED
from clmgit.reconcile.plan import (
    BLOCKED,
    DECOMMISSION,
    IN_SYNC,
    WAITING,
    Target,
    applied_version,
)
from clmgit.registry import (
    DEFAULT_LEASE_SECONDS,
    LeaseLost,
    Registry,
    RegistryUnavailable,
    new_holder,
)
from clmgit.timestamps import format_timestamp

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Plans a cluster again from (its plan, its record as read under the lease).
Replan = Callable[[Target, Cluster], Target]

# Outcomes of a cluster in a run.
APPLIED = "applied"
FAILED = "failed"
SKIPPED = "skipped"
PLANNED = "planned"
STOPPED = "stopped"  # the run was interrupted: lease given up, next_version kept to resume
#: The detail of a cluster the run did not start because it was interrupted.
NOT_STARTED = "the run was interrupted"
#: The detail of a cluster skipped because another reconciler holds its lease.
LEASE_HELD = "another reconciler holds its lease"
#: Plans that start no work: the cluster is reported, not leased.
NO_WORK = (IN_SYNC, BLOCKED, WAITING)
#: Seconds between attempts to take a lease another holder has (`wait_for_leases`).
LEASE_POLL_SECONDS = 2.0
#: Seconds an engine call may go on once the run is interrupted; past them it is abandoned
#: (a cloud or API call that hangs), the cluster recorded as stopped and its lease given up.
STOP_GRACE_SECONDS = 5.0


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

    @property
    def blocked(self) -> bool:
        """Not reconciled because its record or the pins block it (`Target.reason`)."""
        return self.action == BLOCKED and self.outcome == SKIPPED

    @property
    def lease_held(self) -> bool:
        """Skipped because another reconciler held its lease (the run did not reconcile it)."""
        return self.outcome == SKIPPED and self.detail.startswith(LEASE_HELD)


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
    #: Plans a cluster again from its record as read under the lease (see `keep_plan`).
    replan: Replan = field(default=lambda planned, now: keep_plan(planned, now))
    #: Set: no cluster is started any more (the engine's waits stop on it too).
    stop: StopSignal | None = None
    #: The leases' deadlines, shared with the engine's guard; None: the run makes its own.
    leases: LeaseTable | None = None
    #: Seconds to wait for a lease another reconciler holds before skipping the cluster.
    wait_for_leases: float = 0.0
    #: Outcomes the registry did not take, written by this holder's next round (controller).
    unfinished: Unfinished = field(default_factory=Unfinished)
    #: Looks at a cluster's health right after its apply (clmgit.reconcile.health); the
    #: verdict is recorded with the applied version.
    observe: Callable[[Cluster], Health] | None = None
    #: Refuses a cluster before anything is done or written for it, dry runs too (the account
    #: its record names is not the one the run acts in): a failure with that one sentence.
    check: Callable[[Cluster], None] | None = None

    def run(self, targets: Sequence[Target], *, concurrency: int = 4) -> list[Result]:
        """Every target, the ones needing work `concurrency` at a time; results in target order."""
        results: dict[int, Result] = {}
        work = []
        for i, target in enumerate(targets):
            if target.action in NO_WORK:
                results[i] = self._report(_no_work(target))
            else:
                work.append((i, target))
        workers = max(1, concurrency)
        table = self.leases or LeaseTable(workers)
        renewal = Renewal(self.registry, self.holder, lease_timing(self.lease_seconds), table,
                          stop=self.stop)
        with renewal if work and not self.dry_run else nullcontext(), \
                ThreadPoolExecutor(workers) as pool:
            futures = {i: pool.submit(self._one, target, renewal) for i, target in work}
            for i, future in futures.items():
                results[i] = _awaited(future)
        return [results[i] for i in range(len(targets))]

    def _report(self, result: Result) -> Result:
        self.on_result(result)
        return result

    def _one(self, target: Target, renewal: Renewal) -> Result:
        if self.stop is not None and self.stop.is_set():
            return self._report(_result(target, SKIPPED, detail=NOT_STARTED))
        self.on_start(target.cluster.id)
        started = time.monotonic()
        try:
            refusal = self._abandonable(lambda: self._refusal(target.cluster))
        except Cancelled:  # the check (STS) hung when the run was interrupted; nothing written
            return self._report(_result(target, SKIPPED, detail=NOT_STARTED))
        if refusal is not None:
            result = _result(target, FAILED, detail=refusal)
        elif self.dry_run:
            result = self._dry_run(target)
        else:
            result = self._apply(target, renewal)
        return self._report(replace(result, seconds=round(time.monotonic() - started, 3)))

    def _refusal(self, cluster: Cluster) -> str | None:
        if self.check is None:
            return None
        try:
            self.check(cluster)
        except ClmgitError as e:
            return str(e)
        return None

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

    def _apply(self, target: Target, renewal: Renewal) -> Result:
        cluster_id = target.cluster.id
        try:
            fresh = self._lease(cluster_id, renewal)
        except ClmgitError as e:  # the registry failed for this cluster: the others go on
            return _result(target, FAILED, detail=f"cannot take its lease: {e}")
        if fresh is None:
            waited = f" (waited {self.wait_for_leases:g}s)" if self.wait_for_leases else ""
            return _result(target, SKIPPED, detail=LEASE_HELD + waited)
        with renewal.held(cluster_id):
            try:
                outcome = self.unfinished.take(cluster_id)
                if outcome is None:
                    _tell_taken_over(fresh, target)
                if outcome is not None and fresh.status.next_version == outcome.version:
                    return self._finish(renewal, _result(
                        target, APPLIED, detail="recorded the outcome of an earlier round"),
                        status=outcome.status, lifecycle_status=outcome.lifecycle_status)
                return self._apply_leased(target, fresh, renewal)
            except LeaseLost as e:
                return _result(target, FAILED, detail=str(e))
            except ClmgitError as e:
                # A registry write (or the re-plan's read of the channels) failed: this
                # cluster's failure. Its lease is given up if the registry lets us; else it
                # expires.
                self._release_quietly(cluster_id, renewal)
                return _result(target, FAILED, detail=str(e))

    def _lease(self, cluster_id: str, renewal: Renewal) -> Cluster | None:
        """The fresh record under this run's lease; None if another holder keeps it for
        longer than `wait_for_leases`."""
        give_up = time.monotonic() + self.wait_for_leases
        while (fresh := renewal.acquire(cluster_id)) is None:
            left = give_up - time.monotonic()
            pause = min(left, LEASE_POLL_SECONDS)
            if left <= 0 or (self.stop is not None and self.stop.wait(pause)):
                return None
            if self.stop is None:
                time.sleep(pause)
        return fresh

    def _release_quietly(self, cluster_id: str, renewal: Renewal) -> None:
        renewal.stop_renewing(cluster_id)
        try:
            self.registry.record(cluster_id, self.holder, release=True)
        except ClmgitError as e:
            log.warning("cannot give up the lease of %s: %s", cluster_id, e)

    def _apply_leased(self, planned: Target, cluster: Cluster, renewal: Renewal) -> Result:
        # `cluster` is the record as it is now, and the plan is made again from it: the run's
        # plan may be hours old (a decommission cancelled, a block set, a channel changed).
        target = self.replan(planned, cluster)
        if target.action in NO_WORK:
            renewal.stop_renewing(cluster.id)
            self.registry.record(cluster.id, self.holder, release=True)
            return _no_work(target)
        starting = replace(cluster.status, next_version=target.version)
        # The lifecycle stays `requested` until the cluster is created: CLM knows no other
        # value for a cluster in the making (it refuses `creating` as an invalid status).
        renewal.while_leased(cluster.id, lambda: self.registry.record(
            cluster.id, self.holder, status=starting))
        try:
            if target.action == DECOMMISSION:
                report = self._abandonable(lambda: self.engine.decommission(cluster))
            else:
                report = self._abandonable(lambda: self.engine.apply(cluster, target.sha))
        except LeaseExpired as e:  # another reconciler may be at work: write nothing more
            self._release_quietly(cluster.id, renewal)
            return _result(target, FAILED, detail=str(e))
        except Exception as e:  # noqa: BLE001 - one cluster's failure must not stop the others
            if isinstance(e, WindowClosed):  # its maintenance window closed: the next run resumes
                return self._finish(renewal, _result(target, WAITING, detail=str(e)),
                                    status=starting)
            if isinstance(e, Cancelled) or self._stopping:
                # Not the cluster's problem (a step cut short by the stop fails as it may):
                # next_version stays, and the next run resumes.
                return self._finish(renewal, _result(target, STOPPED, detail=_stopped(e)),
                                    status=starting)
            problem = _problem(e)
            failed = replace(starting, problems=_add_problem(starting.problems, problem))
            return self._finish(renewal, _result(target, FAILED, detail=problem.title),
                                status=failed)
        if target.action == DECOMMISSION:
            done = replace(cluster.status, next_version="", problems=())
        else:
            done = ClusterStatus(
                current_version=target.version,
                last_version=cluster.status.current_version,
                applied_at=format_timestamp(timestamps.now()),
            )
            done = replace(done, health=self._health(replace(cluster, status=done)))
        if target.reason:  # started outside its maintenance window (--ignore-window)
            done = replace(done, problems=(Problem(type=IGNORED, title=target.reason),))
        return self._finish(renewal, _result(target, APPLIED, detail=target.reason,
                                             changes=tuple(report.changes)),
                            status=done, lifecycle_status=target.final_lifecycle)

    @property
    def _stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def _abandonable(self, call: Callable[[], T]) -> T:
        """`call()`, on a thread of its own when the run can be interrupted: once it is, the
        call has STOP_GRACE_SECONDS to end (the engine starts no new step after the stop),
        then it is abandoned with `Cancelled` — a hung request must not hold the lease."""
        if self.stop is None:
            return call()
        answer: Future[T] = Future()

        def run() -> None:
            try:
                answer.set_result(call())
            except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
                answer.set_exception(e)

        threading.Thread(target=run, name="engine-call", daemon=True).start()
        while not self.stop.is_set():
            try:
                return answer.result(timeout=0.2)
            except FuturesTimeout:
                continue
        try:
            return answer.result(timeout=STOP_GRACE_SECONDS)
        except FuturesTimeout:
            raise Cancelled(f"stopped: abandoned a call to the cloud or the cluster that was "
                            f"still going {STOP_GRACE_SECONDS:g}s after the interrupt") from None

    def _health(self, cluster: Cluster) -> Health | None:
        """The verdict of a look right after the apply; none if looking itself failed (the
        apply stands: `clmgit health` looks again) or the run is being interrupted."""
        if self.observe is None or self._stopping:
            return None
        try:
            return self.observe(cluster)
        except Exception:  # a look at health must never undo an apply
            log.exception("cannot observe the health of %s", cluster.id)
            return None

    def _finish(self, renewal: Renewal, result: Result, *, status: ClusterStatus,
                lifecycle_status: str | None = None) -> Result:
        """Record the outcome and give the lease up, tried again while the registry is
        unavailable and the lease allows; `result`, or a failure that says what happened and
        that the registry did not take it."""
        renewal.stop_renewing(result.id)  # a lease given up is never renewed again
        try:
            renewal.while_leased(result.id, lambda: self.registry.record(
                result.id, self.holder, status=status, lifecycle_status=lifecycle_status,
                release=True))
        except LeaseLost:
            raise
        except RegistryUnavailable as e:
            if result.outcome == APPLIED:
                self.unfinished.keep(result.id, Outcome(status, lifecycle_status,
                                                        result.version))
            done = result.detail or result.outcome
            return replace(result, outcome=FAILED, detail=f"{done}, but the registry did not "
                           f"record it (kept for this holder's next round): {e}")
        except ClmgitError as e:
            self._release_quietly(result.id, renewal)
            done = result.detail or result.outcome
            return replace(result, outcome=FAILED,
                           detail=f"{done}, but the registry did not record it: {e}")
        return result


def _tell_taken_over(fresh: Cluster, target: Target) -> None:
    """`lease.taken_over` for a cluster another run left half done: its record names a version
    being applied, and no problem says that the run failed (it was killed, or its lease ran
    out)."""
    status = fresh.status
    if status.next_version in ("", status.current_version) or status.problems:
        return
    name = fresh.alias or fresh.id
    events.emit(events.LEASE, cluster=name, event="taken_over")
    events.emit(events.LEASE_TAKEN_OVER, f"took over cluster {name}, which another run left "
                f"while applying {status.next_version}", cluster=name,
                channel=target.cluster.channel)


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
    if target.action == WAITING:
        return _result(target, WAITING, detail=target.reason)
    if target.reason:
        return _result(target, SKIPPED, detail=target.reason)
    return _result(target, IN_SYNC)


def _result(target: Target, outcome: str, *, detail: str = "",
            changes: tuple[str, ...] = ()) -> Result:
    c = target.cluster
    return Result(c.id, c.alias, target.action, outcome, target.version, detail, changes)


def _stopped(error: Exception) -> str:
    if isinstance(error, Cancelled):
        return str(error)
    return f"stopped: the run was interrupted ({str(error).splitlines()[0][:200]})"


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
