"""Small builders of objects for tests and the demo: nodes, pods, owners, budgets.

They return plain dicts. Objects that carry `status` (a Ready node, a Running pod) are meant for
`KubeAPIServer.seed()`, which stores them as kubelet would report them; sent through the API,
the status of a Pod or Node is ignored on create, as on a real cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clmgit_sandbox.kubeapi.store import Obj


def _metadata(
    name: str,
    namespace: str | None,
    labels: Mapping[str, str] | None,
    annotations: Mapping[str, str] | None,
) -> Obj:
    metadata: Obj = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    return metadata


def _object(api_version: str, kind: str, metadata: Obj, **fields: Any) -> Obj:
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}


def _ready_condition(ready: bool) -> Obj:
    return {"type": "Ready", "status": "True" if ready else "False"}


def make_namespace(name: str, *, labels: Mapping[str, str] | None = None) -> Obj:
    return _object("v1", "Namespace", _metadata(name, None, labels, None))


def make_node(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    ready: bool = True,
    unschedulable: bool = False,
    taints: Sequence[Mapping[str, str]] = (),
    provider_id: str = "",
) -> Obj:
    """A Node as kubelet registers it, with a Ready condition."""
    spec: Obj = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if provider_id:
        spec["providerID"] = provider_id
    metadata = _metadata(name, None, labels, annotations)
    return _object(
        "v1", "Node", metadata, spec=spec, status={"conditions": [_ready_condition(ready)]}
    )


def owner_reference(owner: Obj, *, controller: bool = True) -> Obj:
    """An ownerReference to a stored object (it needs its uid: pass what the server returned)."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def make_pod(
    name: str,
    *,
    namespace: str = "default",
    node: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    phase: str = "Running",
    ready: bool = True,
    owners: Sequence[Obj] = (),
    created: str | None = None,
    image: str = "registry.example/app:1",
) -> Obj:
    """A Pod with one container; `phase`/`ready` become its status, `owners` its ownerReferences."""
    metadata = _metadata(name, namespace, labels, annotations)
    if owners:
        metadata["ownerReferences"] = [owner_reference(o) for o in owners]
    if created:
        metadata["creationTimestamp"] = created
    spec: Obj = {"containers": [_container(image)]}
    if node:
        spec["nodeName"] = node
    status = {"phase": phase, "conditions": [_ready_condition(ready)]}
    return _object("v1", "Pod", metadata, spec=spec, status=status)


def _container(image: str = "registry.example/app:1") -> Obj:
    return {"name": "app", "image": image}


def _workload(
    kind: str, name: str, namespace: str, replicas: int, labels: Obj, containers: Sequence[Obj]
) -> Obj:
    template = {
        "metadata": {"labels": dict(labels)},
        "spec": {"containers": [dict(c) for c in containers] or [_container()]},
    }
    spec = {"replicas": replicas, "selector": {"matchLabels": dict(labels)}, "template": template}
    return _object("apps/v1", kind, _metadata(name, namespace, labels, None), spec=spec)


def make_deployment(
    name: str,
    *,
    namespace: str = "default",
    replicas: int = 1,
    labels: Mapping[str, str] | None = None,
    containers: Sequence[Obj] = (),
) -> Obj:
    """A Deployment whose selector and template labels are `labels` (default `app: <name>`)."""
    return _workload(
        "Deployment", name, namespace, replicas, dict(labels or {"app": name}), containers
    )


def make_replicaset(
    name: str, *, namespace: str = "default", replicas: int = 1, labels: Mapping[str, str]
) -> Obj:
    """A ReplicaSet selecting `labels`: a controller whose scale a PodDisruptionBudget reads."""
    return _workload("ReplicaSet", name, namespace, replicas, dict(labels), ())


def make_pdb(
    name: str,
    *,
    namespace: str = "default",
    match_labels: Mapping[str, str],
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
) -> Obj:
    spec: Obj = {"selector": {"matchLabels": dict(match_labels)}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return _object(
        "policy/v1", "PodDisruptionBudget", _metadata(name, namespace, None, None), spec=spec
    )


def make_crd(
    group: str,
    kind: str,
    *,
    plural: str | None = None,
    scope: str = "Namespaced",
    version: str = "v1",
    spec_schema: Obj | None = None,
    status_subresource: bool = False,
) -> Obj:
    """A CustomResourceDefinition serving one version; `spec_schema` types the `spec` field."""
    plural = plural or kind.lower() + "s"
    schema: Obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if spec_schema is not None:
        schema = {"type": "object", "properties": {"spec": spec_schema}}
    served: Obj = {
        "name": version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
    }
    if status_subresource:
        served["subresources"] = {"status": {}}
    names = {"plural": plural, "singular": kind.lower(), "kind": kind}
    spec = {"group": group, "scope": scope, "names": names, "versions": [served]}
    metadata = {"name": f"{plural}.{group}"}
    return _object("apiextensions.k8s.io/v1", "CustomResourceDefinition", metadata, spec=spec)
