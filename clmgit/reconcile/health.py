"""Observing health and recording the verdict (docs/how-to/health-gate.md): `clmgit health`, and
`reconcile` right after each apply.

A verdict is recorded with `Registry.record_health` (no lease: observing never keeps a reconciler
away) and bound to the version the cluster runs; `healthy_since` carries over only while the
cluster stays healthy on that version (clmgit.healthstate.next_verdict).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from clmgit import events, timestamps
from clmgit.access import Access
from clmgit.engine.clock import Clock
from clmgit.engine.cluster import BackendFactory
from clmgit.engine.health import HealthBackends, observe
from clmgit.errors import ClmgitError
from clmgit.healthstate import (
    FAILED,
    UNKNOWN,
    ClusterGate,
    Observation,
    gate_for,
    judge,
    next_verdict,
)
from clmgit.layout import DEFAULT, Layout
from clmgit.model import DECOMMISSIONED, REQUESTED, Cluster, Health
from clmgit.workspace import Workspace

log = logging.getLogger(__name__)

HealthBackendFactory = Callable[[Cluster], HealthBackends]


def health_backends(given: BackendFactory | None, access: Access, *, clock: Clock | None,
                    layout: Layout = DEFAULT) -> HealthBackendFactory:
    """The run's own backends when it was given some (tests, the demo), else the real ones."""
    if given is None:
        from clmgit.reconcile.backends import AwsBackends

        return AwsBackends(access, clock=clock, layout=layout).health

    def make(cluster: Cluster) -> HealthBackends:
        b = given(cluster)
        return HealthBackends(b.stacks, b.pools, b.kube)

    return make


@dataclass
class Observer:
    """Looks at a cluster and makes the verdict to record."""

    backends: HealthBackendFactory
    gates: Callable[[Cluster], ClusterGate]
    layout: Layout = DEFAULT
    now: Callable[[], datetime] = timestamps.now

    def look(self, cluster: Cluster) -> Observation:
        gate = self.gates(cluster)
        try:
            backends = self.backends(cluster)
        except ClmgitError as e:
            return Observation(UNKNOWN, (f"cannot reach the cluster: {_line(e)}",))
        return observe(cluster, backends, gate, layout=self.layout)

    def verdict(self, cluster: Cluster) -> Health:
        """The verdict of one look at `cluster`, its status as the record has it now; told as
        an event (docs/how-to/running-the-controller.md), by reconcile and `clmgit health` alike."""
        observation = self.look(cluster)
        health = next_verdict(cluster.status, observation,
                              deadline=self.gates(cluster).progress_deadline, now=self.now())
        name = cluster.alias or cluster.id
        events.emit(events.HEALTH_VERDICT, cluster=name, channel=cluster.channel,
                    state=health.state)
        if health.state == FAILED:
            events.emit(events.HEALTH_FAILED, f"cluster {name} is unhealthy after applying "
                        f"{health.version}: {'; '.join(health.reasons) or 'no reason given'}",
                        cluster=name, channel=cluster.channel)
        return health


def _line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def workspace_gates(ws: Workspace) -> Callable[[Cluster], ClusterGate]:
    channels = list(ws.channels.values())
    return lambda cluster: gate_for(channels, cluster.channel)


@dataclass(frozen=True)
class HealthRow:
    """A cluster's health as `clmgit health` shows it."""

    id: str
    alias: str
    channel: str
    version: str
    state: str
    since: str
    observed_at: str
    reasons: tuple[str, ...]
    recorded: bool


def observe_fleet(ws: Workspace, observer: Observer, clusters: Sequence[Cluster], *,
                  record: bool = True) -> list[HealthRow]:
    """Look at each cluster, record its verdict, and judge it as the gate would now."""
    rows = []
    for cluster in clusters:
        health = observer.verdict(cluster)
        recorded = False
        if record:
            try:
                ws.registry.record_health(cluster.id, health)
                recorded = True
            except ClmgitError as e:
                log.warning("cannot record the health of %s: %s", cluster.id, e)
        status = replace(cluster.status, health=health)
        judged = judge(status, deadline=observer.gates(cluster).progress_deadline,
                       now=observer.now())
        rows.append(HealthRow(cluster.id, cluster.alias, cluster.channel, health.version,
                              judged.state, judged.since, health.observed_at, judged.reasons,
                              recorded))
    return rows


def select_running(ws: Workspace, *, channel: str | None = None,
                   names: Sequence[str] = ()) -> list[Cluster]:
    """The clusters `clmgit health` looks at: running ones, of `channel` or named."""
    if channel:
        ws.channel(channel)  # an unknown channel is an error, not an empty table
    if names:
        return [ws.cluster(n) for n in dict.fromkeys(names)]
    return [c for c in ws.clusters
            if c.lifecycle_status not in (REQUESTED, DECOMMISSIONED)
            and (channel is None or c.channel == channel)]
