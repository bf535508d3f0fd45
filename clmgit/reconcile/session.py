"""The reconcile-side commands as library calls: `reconcile`, `provision`, `decommission` and the
`controller` loop. The CLI parses options and shows results; everything else happens here."""

from __future__ import annotations

import logging
import multiprocessing
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from clmgit import events
from clmgit.access import AUTO, NO_ROLES, Access, Roles, parse_roles
from clmgit.engine.clock import Cancelled, Clock, StopSignal, SystemClock
from clmgit.errors import ClmgitError, ConfigError, RefusedError
from clmgit.layout import SETTINGS_PATH, Layout, load_settings
from clmgit.machine import spaced_collections
from clmgit.model import CREATING, DECOMMISSION_REQUESTED, REQUESTED
from clmgit.reconcile.leases import LeaseTable, Unfinished
from clmgit.reconcile.maintenance import IGNORED_NOTE, MaintenanceWindows
from clmgit.reconcile.pins import CurrentPins
from clmgit.reconcile.plan import (
    CREATE,
    DECOMMISSION,
    IN_SYNC,
    UPDATE,
    Target,
    applied_version,
    plan,
    select,
)
from clmgit.reconcile.preflight import check_access
from clmgit.reconcile.run import NO_WORK, Reconciler, Replan, Result, keep_plan
from clmgit.reconcile.signed import signed_pins
from clmgit.reconcile.workers import engine_workers, forwarded_events
from clmgit.registry import DEFAULT_LEASE_SECONDS, new_holder
from clmgit.workspace import Workspace

if TYPE_CHECKING:
    from multiprocessing.synchronize import Event as MpEvent

    from clmgit.config.source import ConfigSource
    from clmgit.engine.cluster import BackendFactory, Engine, Report
    from clmgit.model import Cluster, Health

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Options:
    """How a run reaches clusters and what it may do."""

    dry_run: bool = False
    concurrency: int = 4
    #: Worker processes for the engine's CPU work (rendering, dry runs); 1: all in this one.
    #: The CLI passes the usable cores. Doubles a test injects must be shared to be inspected
    #: afterwards, so the library's default is 1.
    processes: int = 1
    token: str | None = None
    kubeconfig: str | None = None
    #: `--kube-auth`: auto, kubeconfig, eks or token (`clmgit.access`).
    kube_auth: str = AUTO
    #: The roles to assume per account; None: those of the workspace's `clmgit.yaml` and
    #: `CLMGIT_AWS_ROLES`, read when the run starts.
    roles: Roles | None = None
    #: Tests and the demo pass their own (fakes, a fast clock); None: the real cloud.
    backends: BackendFactory | None = None
    clock: Clock | None = None
    on_plan: Callable[[int], None] = lambda count: None
    on_start: Callable[[str], None] = lambda cluster_id: None
    on_result: Callable[[Result], None] = lambda result: None
    #: Hears (cluster id, what its engine is doing) during long steps: node waits, drains.
    on_event: Callable[[str, str], None] = lambda cluster_id, text: None
    #: Set: stop at the next step or wait (the engine raises `Cancelled`), start no cluster.
    #: A `multiprocessing` event, so that forked engine workers see it too.
    stop: StopSignal | None = None
    #: The lease holder name; a controller keeps one for all its rounds. None: a new one.
    holder: str | None = None
    #: How long a lease lasts unless renewed (`CLMGIT_LEASE_SECONDS`).
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    #: Seconds to wait for leases other reconcilers hold before skipping their clusters.
    wait_for_leases: float = 0.0
    #: Outcomes a round could not record, for the next round of the same holder.
    unfinished: Unfinished | None = None
    #: Start updates outside clusters' maintenance windows (`--ignore-window`).
    ignore_window: bool = False
    #: Refuse channels whose pin was not moved by a signed commit (`--require-signed-pins`;
    #: also `signing.require_signed_pins` in clmgit.yaml).
    require_signed_pins: bool = False

    @property
    def access(self) -> Access:
        return Access(token=self.token, kubeconfig=self.kubeconfig, kube_auth=self.kube_auth,
                      roles=self.roles or NO_ROLES)


@dataclass(eq=False)
class _LazyEngine:
    """The engine, built when the first cluster needs it: a run with every cluster in sync
    never imports the renderer, boto3 or the Kubernetes client."""

    source: Callable[[], ConfigSource]
    options: Options
    layout: Layout
    events: Callable[[str, str], None]
    leases: LeaseTable
    between_waves: Callable[[Cluster, datetime], None] | None = None
    _engine: Engine | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def _get(self) -> Engine:
        with self._lock:
            if self._engine is None:
                from clmgit.engine.cluster import Engine
                from clmgit.reconcile.backends import AwsBackends, clm_account

                o = self.options
                clock = o.clock or SystemClock(stop=o.stop)
                backends = o.backends or AwsBackends(o.access, clock=clock,
                                                     layout=self.layout)
                # CLM's layout on real backends: CLM's values computed from the account; on
                # given (in-memory) backends they are rendered offline.
                clm = self.layout.clm and o.backends is None
                self._engine = Engine(self.source(), backends, clock=clock,
                                      layout=self.layout, on_event=self.events,
                                      accounts=partial(clm_account, roles=o.access.roles)
                                      if clm else lambda cluster: None,
                                      lease=self._before_each_call)
                if self.between_waves is not None:
                    self._engine.between_waves = self.between_waves
            return self._engine

    def _before_each_call(self, cluster_id: str) -> None:
        """Asked before every call to a cluster's backends: once the run is interrupted no
        new step starts (no termination, apply or deletion), and the lease must be held."""
        stop = self.options.stop
        if stop is not None and stop.is_set():
            raise Cancelled("stopped before its next step: the run was interrupted")
        self.leases.check(cluster_id)

    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> Report:
        return self._get().apply(cluster, sha, dry_run=dry_run)

    def decommission(self, cluster: Cluster, *, dry_run: bool = False) -> Report:
        return self._get().decommission(cluster, dry_run=dry_run)


def _or_new(unfinished: Unfinished | None) -> Unfinished:
    return Unfinished() if unfinished is None else unfinished


def _git_source(ws: Workspace) -> Callable[[], ConfigSource]:
    def make() -> ConfigSource:
        from clmgit.config.composed import workspace_source

        # CLM's layout follows symbolic links inside cluster/, as CLM's checkout does.
        return workspace_source(ws.sources, ws.source_repos.repo, follow_symlinks=ws.layout.clm)

    return make


def _run(ws: Workspace, source: Callable[[], ConfigSource], targets: Sequence[Target],
         options: Options, *, replan: Replan = keep_plan,
         windows: MaintenanceWindows | None = None) -> list[Result]:
    busy = sum(t.action not in NO_WORK for t in targets)
    # Read before any work: a malformed clmgit.yaml fails the run, not each cluster (and is
    # named before missing credentials, which it does not depend on).
    layout = ws.layout
    if options.roles is None:
        options = replace(options, roles=workspace_roles(ws))
    check = None
    if busy and options.backends is None:  # the real cloud: one refusal, not one per cluster
        check_access(options.access, [t.cluster for t in targets
                                      if t.action not in NO_WORK])
        from clmgit.reconcile.backends import AwsBackends

        check = AwsBackends(options.access).check
    options.on_plan(len(targets))
    processes = max(1, min(options.processes, busy, options.concurrency))
    threads = -(-options.concurrency // processes)
    # Made before the workers are forked: they read the deadlines the renewal loop extends.
    leases = LeaseTable(max(1, options.concurrency))
    with spaced_collections(), forwarded_events(options.on_event) as events, engine_workers(
            _LazyEngine(source, options, layout, events=events, leases=leases,
                        between_waves=windows.between_waves if windows else None),
            processes=processes, threads=threads, stop=options.stop) as engine:
        reconciler = Reconciler(ws.registry, engine, dry_run=options.dry_run,
                                holder=options.holder or new_holder(),
                                lease_seconds=options.lease_seconds,
                                on_start=options.on_start, on_result=options.on_result,
                                replan=replan, stop=options.stop, leases=leases,
                                wait_for_leases=options.wait_for_leases,
                                unfinished=_or_new(options.unfinished), check=check,
                                observe=None if options.dry_run else health_observer(ws, options))
        results = reconciler.run(targets, concurrency=options.concurrency)
    if not options.dry_run:
        _tell(targets, results)
    return results


def _tell(targets: Sequence[Target], results: Sequence[Result]) -> None:
    """Each cluster's outcome as an event (the metrics count them; a failure is notified)."""
    for target, result in zip(targets, results, strict=True):
        name, channel = result.alias or result.id, target.cluster.channel
        events.emit(events.CLUSTER_RESULT, cluster=name, channel=channel, outcome=result.outcome)
        if result.failed:
            events.emit(events.RECONCILE_FAILED, f"cluster {name} failed: {result.detail}",
                        cluster=name, channel=channel, version=result.version)
        elif target.reason.endswith(IGNORED_NOTE):
            events.emit(events.WINDOW_BYPASSED, f"cluster {name}: {target.reason}",
                        cluster=name, channel=channel)


def workspace_roles(ws: Workspace) -> Roles:
    """The roles of `aws:` in the control branch's `clmgit.yaml` and of `CLMGIT_AWS_ROLES`."""
    where = f"{SETTINGS_PATH} on branch {ws.control_branch!r}"
    return parse_roles(load_settings(ws.repo.read_file(ws.control_sha, SETTINGS_PATH), where),
                       where)


def health_observer(ws: Workspace, options: Options) -> Callable[[Cluster], Health]:
    """Looks at a cluster's health after its apply, through the run's backends."""
    from clmgit.reconcile.health import Observer, health_backends, workspace_gates

    backends = health_backends(options.backends, options.access, clock=options.clock,
                               layout=ws.layout)
    return Observer(backends, workspace_gates(ws), layout=ws.layout).verdict


def reconcile(
    ws: Workspace,
    options: Options,
    *,
    names: Sequence[str] = (),
    channel: str | None = None,
    shard: tuple[int, int] | None = None,
) -> list[Result]:
    """Every selected cluster to the version its channel pins."""
    if channel:
        ws.channel(channel)  # an unknown channel is an error, not an empty run
    clusters = select(ws.clusters, names=names, channel=channel, shard=shard)
    windows = MaintenanceWindows(ws.channels, ignore=options.ignore_window)
    pinned = signed_pins(ws, ws.pinned_sha, required=options.require_signed_pins)
    targets = [windows.hold(plan(c, pinned)) for c in clusters]
    # Under each lease the cluster is planned again, from its record then and the pins the
    # control branch has then: a plan may be hours old when a rolling update reaches it.
    pins = signed_pins(ws, CurrentPins(ws.repo, ws.control_branch,
                                       sources=ws.source_repos if ws.sources.declared else None),
                       required=options.require_signed_pins)
    return _run(ws, _git_source(ws), targets, options,
                replan=lambda planned, now: windows.hold(plan(now, pins)), windows=windows)


#: The config version CLM gives a directory it provisions from (channel.Directory.ID).
DIRECTORY_VERSION = "<dir>"


def provision(ws: Workspace, options: Options, *, name: str, directory: Path) -> Result:
    """Apply a working tree to one cluster, without git and without the in-sync shortcut (CLM's
    provisioning mode). The version recorded is `<dir>#<hash>`, as CLM forms a directory's."""
    if not (directory / "cluster").is_dir():
        raise ConfigError(f"{directory} has no cluster/ directory to provision from")
    cluster = ws.cluster(name)
    at = DIRECTORY_VERSION
    action = CREATE if cluster.lifecycle_status in (REQUESTED, CREATING) else UPDATE
    target = Target(cluster, action, at, applied_version(at, cluster))
    from clmgit.config.source import DirectoryConfigSource

    follow = ws.layout.clm  # CLM's layout follows links inside cluster/, as in git
    return _run(ws, lambda: DirectoryConfigSource(directory, follow_symlinks=follow), [target],
                options)[0]


def decommission(ws: Workspace, options: Options, *, name: str, confirmed: bool = False
                 ) -> Result:
    """Delete every stack of one cluster, the main stack last; mark it `decommissioned`.

    Only a cluster the registry marks `decommission-requested` is taken down, unless the caller
    confirmed it (`--yes`); a dry run only lists. The check comes before any cloud call."""
    cluster = ws.cluster(name)
    if cluster.lifecycle_status != DECOMMISSION_REQUESTED and not (confirmed or options.dry_run):
        raise RefusedError(
            f"cluster {cluster.alias or cluster.id} is {cluster.lifecycle_status!r}, not "
            f"{DECOMMISSION_REQUESTED!r}: set that in the registry, or pass --yes "
            "(--dry-run lists what would be deleted)"
        )
    target = Target(cluster, DECOMMISSION)

    def replan(planned: Target, now: Cluster) -> Target:
        # Asked for by the registry, not by --yes: the request may have been withdrawn since.
        if confirmed or now.lifecycle_status == DECOMMISSION_REQUESTED:
            return keep_plan(planned, now)
        return Target(now, IN_SYNC, reason=f"its lifecycle_status is now "
                      f"{now.lifecycle_status!r}, no longer {DECOMMISSION_REQUESTED!r}")

    return _run(ws, _git_source(ws), [target], options, replan=replan)[0]


def controller(
    open_ws: Callable[[], Workspace],
    options: Options,
    *,
    interval: float,
    report: Callable[[list[Result]], None],
    stop: threading.Event | MpEvent | None = None,
    round_done: Callable[[ClmgitError | None], None] = lambda error: None,
) -> None:
    """Fetch, reconcile, sleep — until SIGTERM or SIGINT (or `stop` is set). A failing round is
    logged and the next one comes as usual: a controller must outlive a bad commit. After each
    round, `round_done` hears its error (None: the round ran)."""
    # Shared with the forked engine workers: after SIGTERM a round starts no new step either
    # (no termination, apply or deletion), and gives a hung call up as `reconcile` does.
    event: threading.Event | MpEvent = stop or multiprocessing.get_context("fork").Event()
    # One holder for every round: a round finds the leases of the rounds before it as its own,
    # and records what they could not (a registry outage), instead of applying it again.
    options = replace(options, holder=options.holder or new_holder(),
                      unfinished=_or_new(options.unfinished), stop=options.stop or event)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        # The handler takes no lock (it may run while this thread holds the event's): a thread
        # of its own sets the event.
        def handle(*_: object) -> None:
            threading.Thread(target=event.set, name="stop", daemon=True).start()

        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, handle)
    try:
        while not event.is_set():
            try:
                report(reconcile(open_ws(), options))
            except ClmgitError as e:
                log.error("reconcile round failed: %s", e)
                round_done(e)
            else:
                round_done(None)
            event.wait(interval)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
