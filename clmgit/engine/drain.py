"""Draining a node the way CLM does it (docs/explanation/reconcile.md), its SLA settings, and the
marks a node carries while it is replaced (label, taint, cordon, drain-clock annotations).

The drain follows CLM: evict every evictable pod through the Eviction API (mirror pods, DaemonSet
pods and finished pods are left alone); a 429 from a PodDisruptionBudget means wait one poll
interval. A refused pod is force-deleted only when every SLA condition holds: the node has been
draining for `drain_grace_period`, the last forced deletion on this node is
`drain_force_evict_interval` ago, the pod is older than `drain_min_pod_lifetime`, and every pod
sharing a budget with it is older than `drain_min_healthy_sibling_lifetime` (Ready) or
`drain_min_unhealthy_sibling_lifetime` (not Ready). The drain clock is kept in node annotations
(`drain-start`, `last-forced-eviction`), so a restarted run keeps it.

Settings: the `drain_*` config items (node pool first, then cluster), with CLM's defaults
for production and other environments; `rolling_update_surge` is read here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import cast

from clmgit.durations import GO, parse_duration
from clmgit.engine import kubeobjects as k
from clmgit.engine.clock import Backoff, Clock
from clmgit.engine.kube import NODES, PDBS, PODS, KubeClient, Obj, match_labels_selector
from clmgit.errors import ApplyError, ConfigError
from clmgit.model import Cluster
from clmgit.timestamps import format_timestamp, parse_timestamp

LIFECYCLE_LABEL = "lifecycle-status"
READY, DECOMMISSION_PENDING, DRAINING = "ready", "decommission-pending", "draining"
TAINT: k.Taint = {"key": "decommission-pending", "value": "rolling-upgrade",
                  "effect": "PreferNoSchedule"}
DRAIN_START = "clmgit.io/drain-start"
LAST_FORCED = "clmgit.io/last-forced-eviction"
MIRROR_POD = "kubernetes.io/config.mirror"
SURGE_ITEM = "rolling_update_surge"
NODE_READY_TIMEOUT = 900.0  # seconds for a new instance to become a Ready node
TERMINATION_HEADROOM = timedelta(seconds=30)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: config item → (production, other) default, as docs/explanation/reconcile.md lists them.
DRAIN_DEFAULTS = {
    "drain_grace_period": ("6h", "2h"),
    "drain_min_pod_lifetime": ("72h", "8h"),
    "drain_min_healthy_sibling_lifetime": ("1h", "1h"),
    "drain_min_unhealthy_sibling_lifetime": ("6h", "1h"),
    "drain_force_evict_interval": ("5m", "5m"),
    "drain_poll_interval": ("30s", "30s"),
}


class DrainStuck(ApplyError):
    """Pods stay on a node longer than the SLA could ever force; a later run continues."""


# --- settings -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DrainSettings:
    grace_period: timedelta
    min_pod_lifetime: timedelta
    min_healthy_sibling_lifetime: timedelta
    min_unhealthy_sibling_lifetime: timedelta
    force_evict_interval: timedelta
    poll_interval: timedelta
    surge: int = 1

    def budget(self, pods: int) -> timedelta:
        """How long one run drains a node before giving up: time for the SLA to allow forcing
        every pod that was there, one interval apart. Later runs continue the same clock."""
        siblings = max(self.min_healthy_sibling_lifetime, self.min_unhealthy_sibling_lifetime)
        return (self.grace_period + self.min_pod_lifetime + siblings
                + self.force_evict_interval * (pods + 1) + self.poll_interval)

    def node_backoff(self) -> Backoff:
        poll = max(self.poll_interval.total_seconds(), 0.05)
        return Backoff(initial=min(poll, 5.0), factor=1.5, maximum=poll,
                       timeout=NODE_READY_TIMEOUT)


def drain_settings(cluster: Cluster, pool_name: str) -> DrainSettings:
    """The drain SLA and surge of a pool; production defaults when `environment` is production."""
    # Cluster items, overridden by the pool's own (a removed pool has only the cluster's).
    pool = next((p for p in cluster.node_pools if p.name == pool_name), None)
    items = {**cluster.config_items, **(pool.config_items if pool else {})}
    column = 0 if cluster.environment == "production" else 1
    durations = {
        key.removeprefix("drain_"): parse_duration(items.get(key, defaults[column]),
                                                   where=f"config item {key}", rule=GO)
        for key, defaults in DRAIN_DEFAULTS.items()}
    surge = items.get(SURGE_ITEM, "1")
    if not surge.isdigit() or int(surge) < 1:
        raise ConfigError(f"config item {SURGE_ITEM} must be a whole number ≥ 1, not {surge!r}")
    return DrainSettings(**durations, surge=int(surge))


# --- nodes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    name: str
    instance_id: str
    az: str
    ready: bool
    cordoned: bool
    lifecycle: str
    volumes: bool
    annotations: Mapping[str, str]
    taints: tuple[k.Taint, ...] = ()

    @property
    def ours(self) -> bool:
        """Marked by a rolling update (as opposed to cordoned by a human)."""
        return self.lifecycle in (DECOMMISSION_PENDING, DRAINING)

    @classmethod
    def from_api(cls, obj: k.Node) -> Node:
        meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
        provider = str(spec.get("providerID", ""))  # aws:///<az>/<instance id>
        az, _, instance_id = provider.removeprefix("aws:///").rpartition("/")
        return cls(
            name=meta["name"], instance_id=instance_id, az=az, ready=_ready(status),
            cordoned=bool(spec.get("unschedulable")),
            lifecycle=(meta.get("labels") or {}).get(LIFECYCLE_LABEL, ""),
            volumes=bool(status.get("volumesAttached")),
            annotations=meta.get("annotations") or {},
            taints=tuple(spec.get("taints") or ()),
        )


def _ready(status: k.NodeStatus | k.PodStatus) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in status.get("conditions") or ())


def nodes_by_instance(kube: KubeClient) -> dict[str, Node]:
    nodes = (Node.from_api(obj) for obj in cast(list[k.Node], kube.list(NODES)))
    return {n.instance_id: n for n in nodes if n.instance_id}


def _taints(node: Node, *, add: bool) -> list[k.Taint] | None:
    """The node's taints with ours added or removed; None if that changes nothing."""
    others = [t.copy() for t in node.taints if t.get("key") != TAINT["key"]]
    wanted = [*others, TAINT.copy()] if add else others
    return None if wanted == [t.copy() for t in node.taints] else wanted


def mark(kube: KubeClient, node: Node) -> None:
    """decommission-pending: labelled and tainted, still schedulable (a soft preference)."""
    taints = _taints(node, add=True)
    if node.lifecycle in (DECOMMISSION_PENDING, DRAINING) and taints is None:
        return
    patch: Obj = {"metadata": {"labels": {LIFECYCLE_LABEL: node.lifecycle
                                          if node.ours else DECOMMISSION_PENDING}}}
    if taints is not None:
        patch["spec"] = {"taints": taints}
    kube.patch(NODES, node.name, patch)


def cordon(kube: KubeClient, node: Node) -> None:
    if not node.cordoned:
        kube.patch(NODES, node.name, {"spec": {"unschedulable": True}})


def release(kube: KubeClient, node: Node) -> None:
    """Undo everything a rolling update put on a node that no longer needs replacing."""
    patch: Obj = {
        "metadata": {"labels": {LIFECYCLE_LABEL: READY},
                     "annotations": {DRAIN_START: None, LAST_FORCED: None}},
        "spec": {"unschedulable": None},
    }
    taints = _taints(node, add=False)
    if taints is not None:
        patch["spec"]["taints"] = taints or None
    kube.patch(NODES, node.name, patch)


# --- the drain ------------------------------------------------------------------------------


def _time(value: str | None, fallback: datetime) -> datetime:
    return parse_timestamp(value) or fallback


def _created(obj: k.Metadata) -> datetime:
    return _time(obj["metadata"].get("creationTimestamp"), EPOCH)


def evictable(pod: k.Pod) -> bool:
    """Not a mirror pod, not a DaemonSet's, not finished."""
    meta = pod["metadata"]
    if MIRROR_POD in (meta.get("annotations") or {}):
        return False
    if any(ref.get("kind") == "DaemonSet" for ref in meta.get("ownerReferences") or ()):
        return False
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _terminating(pod: k.Pod, now: datetime) -> bool:
    """Being deleted and still within its grace period (plus headroom): wait for it."""
    meta = pod["metadata"]
    if not meta.get("deletionTimestamp"):
        return False
    grace = timedelta(seconds=int(meta.get("deletionGracePeriodSeconds") or 0))
    return now < _time(meta["deletionTimestamp"], EPOCH) + grace + TERMINATION_HEADROOM


def siblings(kube: KubeClient, pod: k.Pod) -> list[k.Pod]:
    """Other pods of the pod's namespace that share a PodDisruptionBudget with it."""
    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    found: dict[str, k.Pod] = {}
    for pdb in cast(list[k.PodDisruptionBudget], kube.list(PDBS, namespace=namespace)):
        selector = match_labels_selector((pdb.get("spec") or {}).get("selector"))
        if selector is None:
            continue
        covered = cast(list[k.Pod], kube.list(PODS, namespace=namespace, label_selector=selector))
        if any(p["metadata"]["name"] == name for p in covered):
            found.update((p["metadata"]["name"], p) for p in covered)
    found.pop(name, None)
    return list(found.values())


def force_allowed(kube: KubeClient, pod: k.Pod, *, now: datetime, drain_start: datetime,
                  last_forced: datetime, settings: DrainSettings) -> bool:
    """CLM's SLA: every condition must hold before a pod a budget protects is deleted."""
    if now < drain_start + settings.grace_period:
        return False
    if now < last_forced + settings.force_evict_interval:
        return False
    if now < _created(pod) + settings.min_pod_lifetime:
        return False
    for sibling in siblings(kube, pod):
        healthy = _ready(sibling.get("status") or {})
        wait = (settings.min_healthy_sibling_lifetime if healthy
                else settings.min_unhealthy_sibling_lifetime)
        if now < _created(sibling) + wait:
            return False
    return True


@dataclass
class _DrainClock:
    start: datetime
    last_forced: datetime


def _begin_drain(kube: KubeClient, node: Node, now: datetime) -> _DrainClock:
    """Label `draining`, cordon, and start the clock — or keep the one a killed run started."""
    start = _time(node.annotations.get(DRAIN_START), now)
    patch: Obj = {"metadata": {"labels": {LIFECYCLE_LABEL: DRAINING},
                               "annotations": {DRAIN_START: format_timestamp(start)}}}
    if not node.cordoned:
        patch["spec"] = {"unschedulable": True}
    if node.lifecycle != DRAINING or DRAIN_START not in node.annotations or not node.cordoned:
        kube.patch(NODES, node.name, patch)
    return _DrainClock(start, _time(node.annotations.get(LAST_FORCED), EPOCH))


def drain_node(kube: KubeClient, node: Node, settings: DrainSettings, *, clock: Clock) -> None:
    """Evict every evictable pod from `node`, forcing only what the SLA allows."""
    drain = _begin_drain(kube, node, clock.now())
    deadline: datetime | None = None
    while True:
        now = clock.now()
        on_node = kube.list(PODS, field_selector=f"spec.nodeName={node.name}")
        pods = [p for p in cast(list[k.Pod], on_node) if evictable(p)]
        todo = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        waiting = [p for p in pods if _terminating(p, now)]
        if not todo and not waiting:
            return
        deadline = deadline or now + settings.budget(len(pods))
        refused = [p for p in todo if not _evict(kube, p)]
        if refused:
            _force_one(kube, node, refused, drain, settings, now)
        elif not waiting:
            continue  # all evicted: look again at once
        if clock.now() >= deadline:
            names = ", ".join(f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                              for p in refused + waiting)
            raise DrainStuck(f"node {node.name} still has pods its budgets protect ({names}); "
                             "run again later to continue the drain")
        clock.sleep(settings.poll_interval.total_seconds())


def _evict(kube: KubeClient, pod: k.Pod) -> bool:
    grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    return kube.evict(pod["metadata"]["namespace"], pod["metadata"]["name"],
                      grace_period_seconds=grace)


def _force_one(kube: KubeClient, node: Node, refused: Sequence[k.Pod], drain: _DrainClock,
               settings: DrainSettings, now: datetime) -> None:
    for pod in refused:
        if force_allowed(kube, pod, now=now, drain_start=drain.start,
                         last_forced=drain.last_forced, settings=settings):
            kube.delete(PODS, pod["metadata"]["name"], namespace=pod["metadata"]["namespace"],
                        grace_period_seconds=(pod.get("spec") or {}).get(
                            "terminationGracePeriodSeconds"))
            drain.last_forced = now
            kube.patch(NODES, node.name,
                       {"metadata": {"annotations": {LAST_FORCED: format_timestamp(now)}}})
            return
