"""Whether a workload has rolled out, judged as `kubectl rollout status` judges it
(kubectl's polymorphichelpers/rollout_status.go), and which pods are broken beyond waiting.

Each function returns None when the object is done, else one line: why it is not (in kubectl's
words where kubectl has them). A Deployment past its progress deadline is a failure, not a wait.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clmgit.engine.kubeobjects import Pod, Workload

#: Container waiting reasons that no amount of waiting fixes.
BROKEN_REASONS = frozenset({"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull",
                            "CreateContainerConfigError", "InvalidImageName"})


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int) else 0


def _waiting_for_spec(obj: Workload) -> bool:
    meta, status = obj.get("metadata") or {}, obj.get("status") or {}
    return _int(meta.get("generation")) > _int(status.get("observedGeneration"))


def deployment(obj: Workload) -> tuple[bool, str] | None:
    """(failed, why) while not rolled out; None when done."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if _waiting_for_spec(obj):
        return False, "waiting for the deployment spec update to be observed"
    for condition in status.get("conditions") or ():
        if (condition.get("type") == "Progressing"
                and condition.get("reason") == "ProgressDeadlineExceeded"):
            return True, "exceeded its progress deadline"
    replicas = spec.get("replicas", 1)
    updated = _int(status.get("updatedReplicas"))
    if isinstance(replicas, int) and updated < replicas:
        return False, f"{updated} out of {replicas} new replicas have been updated"
    if _int(status.get("replicas")) > updated:
        return False, f"{_int(status.get('replicas')) - updated} old replicas are pending " \
                      "termination"
    available = _int(status.get("availableReplicas"))
    if available < updated:
        return False, f"{available} of {updated} updated replicas are available"
    return None


def stateful_set(obj: Workload) -> tuple[bool, str] | None:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    strategy = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate")
    if strategy != "RollingUpdate":
        return None  # kubectl cannot tell either
    if not _int(status.get("observedGeneration")) or _waiting_for_spec(obj):
        return False, "waiting for the statefulset spec update to be observed"
    replicas = spec.get("replicas", 1)
    ready = _int(status.get("readyReplicas"))
    if isinstance(replicas, int) and ready < replicas:
        return False, f"waiting for {replicas - ready} pods to be ready"
    partition = ((spec.get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition")
    if isinstance(partition, int) and isinstance(replicas, int):
        updated = _int(status.get("updatedReplicas"))
        if updated < replicas - partition:
            return False, (f"waiting for partitioned roll out to finish: {updated} out of "
                           f"{replicas - partition} new pods have been updated")
        return None
    if status.get("updateRevision") != status.get("currentRevision"):
        return False, (f"waiting for statefulset rolling update to complete "
                       f"{_int(status.get('updatedReplicas'))} pods at revision "
                       f"{status.get('updateRevision')}")
    return None


def daemon_set(obj: Workload) -> tuple[bool, str] | None:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") != "RollingUpdate":
        return None
    if _waiting_for_spec(obj):
        return False, "waiting for the daemon set spec update to be observed"
    desired = _int(status.get("desiredNumberScheduled"))
    updated = _int(status.get("updatedNumberScheduled"))
    if updated < desired:
        return False, f"{updated} out of {desired} new pods have been updated"
    available = _int(status.get("numberAvailable"))
    if available < desired:
        return False, f"{available} of {desired} updated pods are available"
    return None


ROLLOUT: dict[str, Callable[[Workload], tuple[bool, str] | None]] = {
    "Deployment": deployment, "StatefulSet": stateful_set, "DaemonSet": daemon_set}


def broken_containers(pod: Pod) -> list[str]:
    """`container NAME REASON (N restarts)` for each container waiting for a reason that does
    not pass by itself."""
    status = pod.get("status") or {}
    found = []
    for cs in [*(status.get("initContainerStatuses") or ()),
               *(status.get("containerStatuses") or ())]:
        reason = ((cs.get("state") or {}).get("waiting") or {}).get("reason")
        if reason in BROKEN_REASONS:
            restarts = _int(cs.get("restartCount"))
            found.append(f"container {cs.get('name')} {reason} ({restarts} restarts)")
    return found
