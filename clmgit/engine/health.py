"""One look at a cluster's health (docs/how-to/health-gate.md), through the engine's seams.

A cluster is healthy only if all of these hold:
- its record: no `next_version` (an update under way), no problems;
- CloudFormation: every stack of the cluster in a `*_COMPLETE` state that is not a rollback;
- nodes: all Ready; none outdated (launch template or instance type); none cordoned, unless by
  clmgit's rolling update (then it is being replaced: pending);
- workloads in the namespaces the cluster's manifests touch (those holding a Deployment,
  StatefulSet or DaemonSet that clmgit applied; or the gate's `namespaces`): rolled out as
  `kubectl rollout status` judges, and no pod in CrashLoopBackOff or ImagePullBackOff;
- the gate's optional checks (clmgit.engine.probes).

Each failed condition is a `Finding`. The worst decides: unhealthy, else unknown (something could
not be read), else pending (still converging), else healthy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import cast

from clmgit.engine import kubeobjects as k
from clmgit.engine import rollout
from clmgit.engine.drain import READY, TAINT, Node
from clmgit.engine.kube import FIELD_MANAGER, NODES, PODS, Kind, KubeClient
from clmgit.engine.nodepools import NodePoolBackend
from clmgit.engine.probes import Fetch, Finding, http_fetch, run_check
from clmgit.engine.stacks import StackBackend, own_stack_tags
from clmgit.errors import ClmgitError
from clmgit.healthstate import (
    HEALTHY,
    PENDING,
    UNHEALTHY,
    UNKNOWN,
    ClusterGate,
    Observation,
)
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster

WORKLOADS = (Kind("apps/v1", "Deployment", True, "deployments"),
             Kind("apps/v1", "StatefulSet", True, "statefulsets"),
             Kind("apps/v1", "DaemonSet", True, "daemonsets"))
REPLICA_SETS = Kind("apps/v1", "ReplicaSet", True, "replicasets")
_ORDER = (UNHEALTHY, UNKNOWN, PENDING)


@dataclass
class HealthBackends:
    """What a look at one cluster reads."""

    stacks: StackBackend
    pools: NodePoolBackend
    kube: KubeClient


def observe(cluster: Cluster, backends: HealthBackends, gate: ClusterGate, *,
            layout: Layout = DEFAULT, fetch: Fetch = http_fetch) -> Observation:
    """Everything about `cluster` that keeps it from being healthy, summed up."""
    findings = record_findings(cluster)
    look: Callable[[], list[Finding]]
    for what, look in (
        ("CloudFormation", lambda: stack_findings(backends.stacks, cluster, layout)),
        ("nodes", lambda: node_findings(backends.kube, backends.pools, cluster)),
        ("workloads", lambda: workload_findings(backends.kube, gate.namespaces)),
    ):
        try:
            findings += look()
        except ClmgitError as e:
            findings.append(Finding(UNKNOWN, f"cannot read the {what}: {_line(str(e))}"))
    for check in gate.checks:
        try:
            found = run_check(check, cluster, backends.kube, fetch=fetch,
                              policy=layout.health)
        except ClmgitError as e:
            found = Finding(UNKNOWN, f"{check.describe()}: {_line(str(e))}")
        if found is not None:
            findings.append(found)
    return summarize(findings)


def summarize(findings: Sequence[Finding]) -> Observation:
    if not findings:
        return Observation(HEALTHY)
    worst = next(state for state in _ORDER if any(f.state == state for f in findings))
    ordered = sorted(findings, key=lambda f: _ORDER.index(f.state))
    return Observation(worst, tuple(dict.fromkeys(f.reason for f in ordered)))


def _line(text: str) -> str:
    return text.splitlines()[0][:300] if text else ""


def record_findings(cluster: Cluster) -> list[Finding]:
    status = cluster.status
    found = []
    if status.problems:
        found.append(Finding(UNHEALTHY, f"reconcile failed: {_line(status.problems[-1].title)}"))
    if status.next_version:
        found.append(Finding(PENDING, f"an update to {status.next_version[:7]} is under way"))
    return found


def stack_findings(stacks: StackBackend, cluster: Cluster, layout: Layout) -> list[Finding]:
    found = {s.name: s for query in own_stack_tags(cluster, layout)
             for s in stacks.find_stacks(query)}
    if not found:
        return [Finding(UNKNOWN, "no CloudFormation stack of the cluster was found")]
    findings = []
    for name in sorted(found):
        status, reason = found[name].status, found[name].reason
        why = f": {_line(reason)}" if reason else ""
        if not status or (status.endswith("_COMPLETE") and "ROLLBACK" not in status):
            continue
        if status.endswith("_IN_PROGRESS") and "ROLLBACK" not in status:
            findings.append(Finding(PENDING, f"stack {name} is {status}"))
        else:
            findings.append(Finding(UNHEALTHY, f"stack {name} is {status}{why}"))
    return findings


def node_findings(kube: KubeClient, pools: NodePoolBackend, cluster: Cluster) -> list[Finding]:
    findings = []
    for node in map(Node.from_api, cast(list[k.Node], kube.list(NODES))):
        if not node.ready:
            findings.append(Finding(UNHEALTHY, f"node {node.name} is NotReady"))
        if node.cordoned:
            if node.lifecycle not in ("", READY) or any(t.get("key") == TAINT["key"]
                                                        for t in node.taints):
                findings.append(Finding(PENDING, f"node {node.name} is being replaced"))
            else:
                findings.append(Finding(UNHEALTHY,
                                        f"node {node.name} is cordoned (not by clmgit)"))
    for pool in cluster.node_pools:
        state = pools.pool_state(cluster, pool.name)
        if state.outdated:
            findings.append(Finding(PENDING, (
                f"node pool {pool.name}: {len(state.outdated)} of {len(state.instances)} "
                "instance(s) outdated (launch template or instance type)")))
    return findings


def workload_findings(kube: KubeClient, namespaces: Sequence[str]) -> list[Finding]:
    workloads = [w for kind in WORKLOADS for w in cast(list[k.Workload], kube.list(kind))]
    chosen = set(namespaces) or touched_namespaces(workloads)
    mine = [w for w in workloads if w["metadata"].get("namespace") in chosen]
    findings = []
    for w in mine:
        judged = rollout.ROLLOUT[w["kind"]](w)
        if judged is not None:
            failed, why = judged
            findings.append(Finding(UNHEALTHY if failed else PENDING, f"{_name(w)}: {why}"))
    pods = [p for p in cast(list[k.Pod], kube.list(PODS))
            if p["metadata"].get("namespace") in chosen]
    if any(rollout.broken_containers(p) for p in pods):
        owners = _owners(kube, workloads)
        for pod in pods:
            for broken in rollout.broken_containers(pod):
                owner = owners.get(_owner_uid(pod) or "", "")
                lead = f"{owner}: " if owner else ""
                findings.append(Finding(UNHEALTHY, (
                    f"{lead}pod {pod['metadata']['namespace']}/{pod['metadata']['name']} "
                    f"{broken}")))
    return findings


def touched_namespaces(workloads: Iterable[k.Workload]) -> set[str]:
    """The namespaces of the workloads clmgit applied (its field manager owns fields of them)."""
    return {w["metadata"]["namespace"] for w in workloads
            if any(e.get("manager") == FIELD_MANAGER
                   for e in w["metadata"].get("managedFields") or ())}


def _name(obj: k.Metadata) -> str:
    return f"{obj['kind']} {obj['metadata'].get('namespace')}/{obj['metadata']['name']}"


def _owner_uid(obj: k.Metadata) -> str | None:
    refs = obj["metadata"].get("ownerReferences") or ()
    return str(refs[0].get("uid")) if refs else None


def _owners(kube: KubeClient, workloads: Sequence[k.Workload]) -> dict[str, str]:
    """Pod owner uid → the workload's name: a Deployment's pods are owned by its ReplicaSets."""
    by_uid = {str(w["metadata"].get("uid")): _name(w) for w in workloads}
    for rs in cast(list[k.Workload], kube.list(REPLICA_SETS)):
        parent = _owner_uid(rs)
        if parent in by_uid:
            by_uid[str(rs["metadata"].get("uid"))] = by_uid[parent]
    return by_uid
