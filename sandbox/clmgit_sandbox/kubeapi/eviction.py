"""The Eviction subresource (`POST .../pods/<name>/eviction`), judged by PodDisruptionBudgets.

It follows the API server's eviction handler, with PDB status from `disruption.py`:
- a Pending, Succeeded or Failed pod, or one already being deleted, is deleted without a PDB check;
- more than one PDB covering the pod: 500 (the server does not support that);
- a pod that is not Ready may go if the budget is healthy (or `unhealthyPodEvictionPolicy` is
  AlwaysAllow); otherwise 429 TooManyRequests when `disruptionsAllowed` is 0;
- else the pod is deleted and the answer is `Status Success` (201).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from clmgit_sandbox.kubeapi.cluster import Cluster
from clmgit_sandbox.kubeapi.disruption import PDBS, PODS, is_ready, pdb_status, selects
from clmgit_sandbox.kubeapi.errors import (
    APIError,
    bad_request,
    not_found,
    status_body,
    too_many_requests,
)
from clmgit_sandbox.kubeapi.lifecycle import DeleteOptions, delete
from clmgit_sandbox.kubeapi.store import Obj

MULTIPLE_PDBS = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
    "support."
)
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


def _can_ignore_pdb(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Pending", "Succeeded", "Failed") or bool(
        pod["metadata"].get("deletionTimestamp")
    )


def _check_budget(cluster: Cluster, pod: Obj, pdb: Obj) -> None:
    status = pdb_status(cluster, pdb)
    current, desired = status["currentHealthy"], status["desiredHealthy"]
    if not is_ready(pod):
        policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy", "IfHealthyBudget")
        if policy == "AlwaysAllow" or (current >= desired and desired > 0):
            return
    if status["disruptionsAllowed"] <= 0:
        name = pdb["metadata"]["name"]
        message = (
            f"The disruption budget {name} needs {desired} healthy pods and has {current} currently"
        )
        raise too_many_requests(VIOLATION, [{"reason": "DisruptionBudget", "message": message}])


def evict(cluster: Cluster, namespace: str, name: str, body: Any, dry_run: bool) -> Obj:
    """Evict pod `name`; returns the success `Status`, raises 404/429/500 as the server does."""
    if not isinstance(body, dict):
        raise bad_request("not a Eviction object")
    if (body.get("metadata") or {}).get("name", "") != name:
        raise bad_request("name in URL does not match name in Eviction object")
    pod = cluster.store.get(PODS, namespace, name)
    if pod is None:
        raise not_found("", "pods", name)
    if not _can_ignore_pdb(pod):
        pdbs = [pdb for pdb in cluster.store.list_objects(PDBS, namespace) if selects(pdb, pod)]
        if len(pdbs) > 1:
            raise APIError(500, "", MULTIPLE_PDBS)
        if pdbs:
            _check_budget(cluster, pod, pdbs[0])
    options = DeleteOptions.parse(body.get("deleteOptions"), {})
    if dry_run and not options.dry_run:
        options = dataclasses.replace(options, dry_run=True)
    delete(cluster, cluster.type_of(PODS), pod, options)
    return status_body(0, status="Success")
