"""Prometheus metrics of the long-running processes, through the official `prometheus-client`:
the controller's (`ControllerMetrics`, fed by `clmgit.events` and by the controller's rounds)
and the registry server's requests (`RegistryMetrics`, an ASGI middleware).

Every metric lives in the process's own `CollectorRegistry`, never the library's global one, so
that two servers in one process (the tests) count apart. No label carries a value taken from
input that could be a secret: labels are fixed words (outcomes, steps, targets, states), channel
names, and the registry's route templates (`/kubernetes-clusters/{cluster_id}`, never the path
asked for). The cardinality of each label is in docs/how-to/metrics-and-alerts.md.
"""

from __future__ import annotations

import time
from collections import Counter as Tally
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
)

from clmgit import events
from clmgit.healthstate import STATES

# No `_created` series: they would double the count of every counter's series, and no alert
# here reads them.
disable_created_metrics()  # type: ignore[no-untyped-call]  # unannotated in 0.26

#: Label values that exist from the start (at 0), so that an alert on `increase()` sees the
#: first failure too.
STEPS = ("stacks", "node_pools", "manifests", "deletions")
LEASE_EVENTS = ("acquired", "lost", "taken_over")
RETRY_TARGETS = ("aws", "kubernetes", "registry")
UPDATE_OUTCOMES = ("applied", "failed", "skipped", "stopped")
ROUND_RESULTS = ("ok", "failed")

ROUND_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200)
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class ControllerMetrics:
    """The controller's metrics; `hear` is its `clmgit.events` listener."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        ProcessCollector(registry=r)  # process_start_time_seconds: the alert on no round
        self.rounds = Counter("clmgit_rounds", "Reconcile rounds finished, by result (failed: "
                              "the round could not run, such as an unreachable registry).",
                              ["result"], registry=r)
        self.round_duration = Histogram("clmgit_round_duration_seconds",
                                        "How long a reconcile round took.",
                                        buckets=ROUND_BUCKETS, registry=r)
        self.last_success = Gauge("clmgit_last_successful_round_timestamp_seconds",
                                  "When the last round that ran finished (Unix time).",
                                  registry=r)
        self.started_at = Gauge("clmgit_round_started_timestamp_seconds",
                                "When the round under way (or the last one) started (Unix "
                                "time).", registry=r)
        self.running = Gauge("clmgit_round_in_progress",
                             "1 while a round runs, 0 during the pause.", registry=r)
        self.interval = Gauge("clmgit_round_interval_seconds",
                              "The controller's --interval: the pause between rounds.",
                              registry=r)
        self.clusters = Gauge("clmgit_clusters", "Clusters by the outcome of their last round "
                              "(in-sync, applied, failed, skipped, stopped) and channel.",
                              ["state", "channel"], registry=r)
        self.updates = Counter("clmgit_cluster_updates", "Clusters worked on (not in sync), "
                               "by outcome.", ["outcome"], registry=r)
        self.step_failures = Counter("clmgit_step_failures", "Engine steps that failed.",
                                     ["step"], registry=r)
        self.nodes_replaced = Counter("clmgit_nodes_replaced", "Nodes replaced by rolling "
                                      "updates.", registry=r)
        self.leases = Counter("clmgit_lease_events", "Cluster leases acquired, lost to "
                              "another reconciler, or taken over from an unfinished run.",
                              ["event"], registry=r)
        self.retries = Counter("clmgit_retries", "Requests tried again, by target.",
                               ["target"], registry=r)
        self.health = Gauge("clmgit_health_verdicts", "Clusters by their last health verdict.",
                            ["state"], registry=r)
        _zero(self.rounds, "result", ROUND_RESULTS)
        _zero(self.updates, "outcome", UPDATE_OUTCOMES)
        _zero(self.step_failures, "step", STEPS)
        _zero(self.leases, "event", LEASE_EVENTS)
        _zero(self.retries, "target", RETRY_TARGETS)
        _zero(self.health, "state", STATES)
        self._verdicts: dict[str, str] = {}

    def hear(self, event: events.Event) -> None:
        """Count what `event` tells."""
        name, fields = event.name, event.fields
        if name == events.CLUSTER_RESULT and fields.get("outcome", "in-sync") != "in-sync":
            self.updates.labels(outcome=fields["outcome"]).inc()
        elif name == events.STEP_FAILED:
            self.step_failures.labels(step=fields["step"]).inc()
        elif name == events.NODES_REPLACED:
            self.nodes_replaced.inc(int(fields.get("count", "0")))
        elif name == events.LEASE:
            self.leases.labels(event=fields["event"]).inc()
        elif name == events.RETRY:
            self.retries.labels(target=fields["target"]).inc(int(fields.get("count", "1")))
        elif name == events.HEALTH_VERDICT and event.cluster:
            self._verdicts[event.cluster] = fields["state"]
            counts = Tally(self._verdicts.values())
            for state in {*STATES, *counts}:
                self.health.labels(state=state).set(counts[state])

    def round_started(self) -> None:
        self.started_at.set(time.time())
        self.running.set(1)

    def round_finished(self, *, seconds: float, ok: bool) -> None:
        self.running.set(0)
        self.rounds.labels(result="ok" if ok else "failed").inc()
        self.round_duration.observe(seconds)
        if ok:
            self.last_success.set(time.time())

    def cluster_states(self, states: Iterable[tuple[str, str]]) -> None:
        """The (state, channel) of every cluster after a round; the gauge shows exactly these."""
        self.clusters.clear()
        for (state, channel), count in Tally(states).items():
            self.clusters.labels(state=state, channel=channel).set(count)


class RegistryMetrics:
    """The registry server's requests by route template; counted by `Metered`."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("clmgit_registry_requests", "Requests answered, by route "
                                "template, method and status.", ["route", "method", "status"],
                                registry=self.registry)
        self.duration = Histogram("clmgit_registry_request_duration_seconds",
                                  "Time to answer a request, by route template.", ["route"],
                                  buckets=REQUEST_BUCKETS, registry=self.registry)


class Metered:
    """ASGI middleware: every request counted in `metrics` under the template of the route of
    `routes` it asks for (`app.add_middleware(Metered, metrics=..., routes=app.routes)`)."""

    def __init__(self, app: Any, *, metrics: RegistryMetrics, routes: Sequence[Any]) -> None:
        self.app, self.metrics, self.routes = app, metrics, routes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [500]

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = _route(self.routes, scope)
            method = scope["method"] if scope["method"] in _METHODS else "other"
            self.metrics.requests.labels(route=route, method=method,
                                         status=str(status[0])).inc()
            self.metrics.duration.labels(route=route).observe(time.perf_counter() - started)


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _route(routes: Sequence[Any], scope: Mapping[str, Any]) -> str:
    """The template of the route the path belongs to (also when the answer is a 401 or 405),
    or `other`: a path nobody routes is not a label value, or a scanner could grow the series
    without end."""
    from starlette.routing import Match

    for route in routes:
        if route.matches(scope)[0] is not Match.NONE:
            return str(route.path)
    return "other"


def _zero(metric: Counter | Gauge, label: str, values: Iterable[str]) -> None:
    for value in values:
        metric.labels(**{label: value})
