"""The state of one emulated cluster: its resource types, its objects, its clock.

Also the object presentation every response goes through (`present`), and the defaults the
server fills in when an object is created, so that both live in one place.
"""

from __future__ import annotations

import copy
import datetime as dt
import uuid
from collections.abc import Callable
from typing import Any

from clmgit_sandbox.kubeapi.disruption import pdb_status
from clmgit_sandbox.kubeapi.resources import ResourceRegistry, ResourceType
from clmgit_sandbox.kubeapi.selectors import (
    matches_fields,
    matches_labels,
    parse_field_selector,
    parse_label_selector,
)
from clmgit_sandbox.kubeapi.store import Obj, Store

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def utc_timestamp() -> str:
    """RFC 3339 to the second, as the API server writes timestamps."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Cluster:
    """Registry, store and clock; the default namespaces exist from the start."""

    def __init__(self, clock: Callable[[], str] = utc_timestamp) -> None:
        self.registry = ResourceRegistry()
        self.store = Store()
        self.now = clock
        namespaces = self.registry.by_kind("v1", "Namespace")
        assert namespaces is not None
        for name in DEFAULT_NAMESPACES:
            obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            self.store.put(namespaces.key, self.initialize(namespaces, obj))

    def type_of(self, key: tuple[str, str]) -> ResourceType:
        rtype = self.registry.by_key(key)
        if rtype is None:
            raise KeyError(key)
        return rtype

    def select(
        self, rtype: ResourceType, namespace: str | None, query: dict[str, str]
    ) -> list[Obj]:
        """Objects of `rtype` (in `namespace`, or all) that match the query's selectors."""
        labels = parse_label_selector(query.get("labelSelector"))
        fields = parse_field_selector(query.get("fieldSelector"), rtype.kind, rtype.builtin)
        return [
            obj
            for obj in self.store.list_objects(rtype.key, namespace)
            if matches_labels(labels, obj) and matches_fields(fields, obj)
        ]

    def list_body(
        self, rtype: ResourceType, objects: list[Obj], metadata: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A `<Kind>List` of `objects`, as list and deletecollection answer."""
        items = [self.present(rtype, obj) for obj in objects]
        if rtype.builtin:
            # The server leaves apiVersion/kind out of the items of built-in lists.
            items = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in items]
        meta = {"resourceVersion": str(self.store.revision), **(metadata or {})}
        return {
            "kind": rtype.list_kind,
            "apiVersion": rtype.api_version,
            "metadata": meta,
            "items": items,
        }

    def initialize(self, rtype: ResourceType, obj: Obj) -> Obj:
        """System metadata and kind defaults of a new object (in place; also returned)."""
        metadata = obj.setdefault("metadata", {})
        metadata["uid"] = str(uuid.uuid4())
        metadata["creationTimestamp"] = self.now()
        metadata["generation"] = 1
        if rtype.builtin and rtype.kind in _DEFAULTS:
            _DEFAULTS[rtype.kind](obj, self.now())
        return obj

    def present(self, rtype: ResourceType, obj: Obj) -> Obj:
        """An object as responses show it: in the requested version, kind first."""
        body: Obj = {"apiVersion": rtype.api_version, "kind": rtype.kind}
        body.update((k, v) for k, v in obj.items() if k not in body)
        if rtype.builtin and rtype.kind == "PodDisruptionBudget":
            body["status"] = pdb_status(self, body)
        return body


def _namespace_defaults(obj: Obj, now: str) -> None:
    obj["metadata"].setdefault("labels", {})[NAMESPACE_NAME_LABEL] = obj["metadata"]["name"]
    obj["spec"] = {"finalizers": ["kubernetes"]}
    obj["status"] = {"phase": "Active"}


def _pod_defaults(obj: Obj, now: str) -> None:
    # Nothing runs pods here: a new pod stays Pending until a client (or seed) sets its status.
    obj.setdefault("status", {}).setdefault("phase", "Pending")


def _crd_defaults(obj: Obj, now: str) -> None:
    spec = obj.setdefault("spec", {})
    names = spec.setdefault("names", {})
    names.setdefault("singular", names.get("kind", "").lower())
    names.setdefault("listKind", names.get("kind", "") + "List")
    storage = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]
    obj["status"] = {
        "acceptedNames": copy.deepcopy(names),
        "storedVersions": storage,
        "conditions": [
            _condition("NamesAccepted", "NoConflicts", "no conflicts found", now),
            _condition(
                "Established", "InitialNamesAccepted", "the initial names have been accepted", now
            ),
        ],
    }


def _condition(kind: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


_DEFAULTS: dict[str, Callable[[Obj, str], None]] = {
    "Namespace": _namespace_defaults,
    "Pod": _pod_defaults,
    "CustomResourceDefinition": _crd_defaults,
}
