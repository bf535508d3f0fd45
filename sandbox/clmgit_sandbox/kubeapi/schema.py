"""How lists and maps of an object merge: the part of the schema that patches and apply need.

Server-side apply and strategic merge patch both need to know, for a field, whether a list is a
*map* (items identified by key fields), a *set* (of scalars) or *atomic* (replaced whole), and
whether a map is atomic. For built-in kinds this comes from the Go types' markers (`listType`,
`listMapKey`, `patchMergeKey`, `mapType=atomic`); the table below holds the ones of the kinds the
emulator serves. For custom resources it comes from `x-kubernetes-list-type`,
`x-kubernetes-list-map-keys` and `x-kubernetes-map-type` in the CRD's schema; metadata follows
ObjectMeta in both cases.

A field is addressed by its *names*: the field names from the root, list positions left out, e.g.
`("spec", "template", "spec", "containers", "ports")`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

Names = tuple[str, ...]


@dataclass(frozen=True)
class ListType:
    """`kind` is "map", "set" or "atomic"; `keys` are the apply keys; `merge_key` the SMP key."""

    kind: str
    keys: tuple[str, ...] = ()
    merge_key: str = ""


ATOMIC = ListType("atomic")
SET = ListType("set")


def _map(*keys: str, merge_key: str = "") -> ListType:
    return ListType("map", keys, merge_key or keys[0])


_CONTAINER_PORTS = _map("containerPort", "protocol")

#: Keyed by (parent field, field) first, then by (field,) alone.
_BUILTIN_LISTS: dict[Names, ListType] = {
    ("containers",): _map("name"),
    ("initContainers",): _map("name"),
    ("ephemeralContainers",): _map("name"),
    ("containers", "ports"): _CONTAINER_PORTS,
    ("initContainers", "ports"): _CONTAINER_PORTS,
    ("ephemeralContainers", "ports"): _CONTAINER_PORTS,
    ("spec", "ports"): _map("port", "protocol"),  # Service ports
    ("env",): _map("name"),
    ("volumeMounts",): _map("mountPath"),
    ("volumeDevices",): _map("devicePath"),
    ("volumes",): _map("name"),
    ("imagePullSecrets",): _map("name"),
    ("hostAliases",): _map("ip"),
    ("topologySpreadConstraints",): _map("topologyKey", "whenUnsatisfiable"),
    ("resourceClaims",): _map("name"),
    ("schedulingGates",): _map("name"),
    ("conditions",): _map("type"),
    ("addresses",): _map("type"),
    ("ownerReferences",): _map("uid"),
    ("finalizers",): SET,
}

#: Maps and structs owned and replaced as a whole (LabelSelector, Service selector, nodeSelector).
_BUILTIN_ATOMIC = {"selector", "nodeSelector", "labelSelector", "namespaceSelector"}


class Schema(Protocol):
    def list_type(self, names: Names) -> ListType: ...

    def atomic_map(self, names: Names) -> bool: ...


class BuiltinSchema:
    """Merge rules of the built-in kinds, from the table above."""

    def list_type(self, names: Names) -> ListType:
        return _BUILTIN_LISTS.get(names[-2:], _BUILTIN_LISTS.get(names[-1:], ATOMIC))

    def atomic_map(self, names: Names) -> bool:
        return bool(names) and names[-1] in _BUILTIN_ATOMIC and names[0] != "metadata"


BUILTIN_SCHEMA = BuiltinSchema()


class CRDSchema:
    """Merge rules of a custom resource, read from its CRD's openAPIV3Schema."""

    def __init__(self, openapi: dict[str, Any]):
        self._root = openapi

    @property
    def openapi(self) -> dict[str, Any]:
        """The CRD's openAPIV3Schema, as given."""
        return self._root

    def _node(self, names: Names) -> dict[str, Any]:
        node = self._root
        for name in names:
            while node.get("type") == "array":
                node = node.get("items") or {}
            props = node.get("properties") or {}
            if name in props:
                node = props[name]
            else:
                node = node.get("additionalProperties") or {}
                if not isinstance(node, dict):
                    return {}
        return node

    def list_type(self, names: Names) -> ListType:
        if names and names[0] == "metadata":
            return BUILTIN_SCHEMA.list_type(names)
        node = self._node(names)
        kind = node.get("x-kubernetes-list-type", "atomic")
        if kind == "map":
            keys = tuple(node.get("x-kubernetes-list-map-keys") or ())
            return _map(*keys) if keys else ATOMIC
        return SET if kind == "set" else ATOMIC

    def atomic_map(self, names: Names) -> bool:
        if names and names[0] == "metadata":
            return False
        return self._node(names).get("x-kubernetes-map-type") == "atomic"
