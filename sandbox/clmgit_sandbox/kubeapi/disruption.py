"""PodDisruptionBudget status, computed as the disruption controller would compute it.

No disruption controller runs, so a PDB's status is computed whenever it is read or an eviction
is judged: pods matched by the selector in the PDB's namespace (an empty selector matches none);
`currentHealthy` counts the Ready ones not being deleted; `expectedPods` is the number of matched
pods for an integer `minAvailable`, else the sum of `spec.replicas` of the pods' controllers (a
ReplicaSet owned by a Deployment counts as the Deployment; pods without a controller are not
counted); `disruptionsAllowed` is `currentHealthy - desiredHealthy`, never below 0, and 0 when no
pods are expected or a pod's controller cannot be found (the controller's fail-safe).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from clmgit_sandbox.kubeapi.selectors import from_label_selector_object, matches_labels
from clmgit_sandbox.kubeapi.store import Obj

if TYPE_CHECKING:
    from clmgit_sandbox.kubeapi.cluster import Cluster

PODS = ("", "pods")
PDBS = ("policy", "poddisruptionbudgets")


def is_ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def selects(pdb: Obj, pod: Obj) -> bool:
    """Whether `pdb` covers `pod`; an empty selector covers nothing."""
    requirements = from_label_selector_object((pdb.get("spec") or {}).get("selector"))
    return bool(requirements) and matches_labels(requirements, pod)


def _matched_pods(cluster: Cluster, pdb: Obj) -> list[Obj]:
    namespace = pdb["metadata"].get("namespace", "")
    return [pod for pod in cluster.store.list_objects(PODS, namespace) if selects(pdb, pod)]


def _scaled(value: Any, total: int) -> int:
    """An int-or-percent of `total`, percentages rounded up."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


def _controller_scale(cluster: Cluster, ref: dict[str, Any]) -> tuple[str, int] | None:
    found = cluster.store.by_uid(ref.get("uid", ""))
    if found is None:
        return None
    _, controller = found
    parent = _controller_ref(controller)
    if controller.get("kind") == "ReplicaSet" and parent and parent.get("kind") == "Deployment":
        return _controller_scale(cluster, parent)
    replicas = (controller.get("spec") or {}).get("replicas", 1 if "spec" in controller else None)
    if not isinstance(replicas, int):
        return None  # a DaemonSet or Job: no scale, as the controller finds none either
    return controller["metadata"]["uid"], replicas


def _controller_ref(obj: Obj) -> dict[str, Any] | None:
    refs = obj["metadata"].get("ownerReferences") or []
    return next((ref for ref in refs if ref.get("controller")), None)


def _expected_scale(cluster: Cluster, pods: list[Obj]) -> int | None:
    scales: dict[str, int] = {}
    for pod in pods:
        ref = _controller_ref(pod)
        if ref is None or ref.get("uid") in scales:
            continue
        found = _controller_scale(cluster, ref)
        if found is None:
            return None
        scales[ref.get("uid", "")] = found[1]
    return sum(scales.values())


def _expected_and_desired(
    cluster: Cluster, spec: dict[str, Any], pods: list[Obj]
) -> tuple[int, int] | None:
    if "maxUnavailable" in spec:
        expected = _expected_scale(cluster, pods)
        if expected is None:
            return None
        return expected, max(0, expected - _scaled(spec["maxUnavailable"], expected))
    min_available = spec.get("minAvailable")
    if isinstance(min_available, int):
        return len(pods), min_available
    if min_available is None:
        return 0, 0
    expected = _expected_scale(cluster, pods)
    return None if expected is None else (expected, _scaled(min_available, expected))


def pdb_status(cluster: Cluster, pdb: Obj) -> dict[str, Any]:
    """The status the disruption controller would write for `pdb` now."""
    pods = _matched_pods(cluster, pdb)
    healthy = sum(1 for p in pods if is_ready(p) and not p["metadata"].get("deletionTimestamp"))
    counts = _expected_and_desired(cluster, pdb.get("spec") or {}, pods)
    expected, desired = counts if counts else (0, 0)
    allowed = max(0, healthy - desired) if counts and expected > 0 else 0
    meta = pdb["metadata"]
    condition = {
        "type": "DisruptionAllowed",
        "status": "True" if allowed else "False",
        "observedGeneration": meta.get("generation", 1),
        "lastTransitionTime": meta.get("creationTimestamp", ""),
        "reason": "SufficientPods" if allowed else "InsufficientPods",
        "message": "",
    }
    return {
        "observedGeneration": meta.get("generation", 1),
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "conditions": [condition],
    }
