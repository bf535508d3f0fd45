"""Taking over objects that kubectl applied client-side, as CLM applies every manifest.

Such an object carries the `last-applied-configuration` annotation, and its fields belong to
kubectl's client-side manager through an `Update` entry of `metadata.managedFields`. A
server-side apply as `clmgit` would then conflict on every changed value (409) and could never
prune a key a manifest dropped, since clmgit does not own it. `kubectl apply --server-side`
meets the same problem and migrates the object first (client-go's `csaupgrade`); this module
plans the same migration:

- the client-side managers: `Update` entries (no subresource) of `kubectl-client-side-apply`
  (CLM's manager, inline or through the kubectl binary), or of `kubectl` when it owns the
  annotation (kubectl before 1.19 wrote client-side apply under its user agent's name). kubectl
  itself picks the owners of the annotation; naming the managers means a `kubectl edit` by a
  human (`kubectl-edit`) is never taken;
- their field sets move into clmgit's `Apply` entry (united with one it already has), their
  entries go; every other manager's entry is left exactly as it is, so conflicts with those
  stay conflicts;
- the annotation goes too, with its field: the server keeps it up to date only for the manager
  `kubectl`, so a stale copy would mislead a later client-side `kubectl apply`'s three-way merge;
- one JSON patch carries it all, guarded by the object's resourceVersion (a `replace` of it, as
  kubectl sends, so a concurrent write is a 409 to retry, not a 422).

A dry run cannot write the migration; `as_if_taken_over` predicts what the apply after it would
prune, from the field sets the server's dry-run answer carries.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clmgit.engine.fieldsv1 import FieldPath, paths, to_fields_v1
from clmgit.engine.kubeobjects import ManagedFieldsEntry, ObjectMeta

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CSA_MANAGER = "kubectl-client-side-apply"
#: kubectl's own name: a client-side manager only where it owns the annotation.
KUBECTL = "kubectl"
ANNOTATIONS: FieldPath = ("f:metadata", "f:annotations")
ANNOTATION_FIELD: FieldPath = (*ANNOTATIONS, f"f:{LAST_APPLIED}")


@dataclass(frozen=True)
class Takeover:
    """What the migration takes from whom, and the JSON patch that does it."""

    managers: tuple[str, ...]
    patch: list[dict[str, Any]]
    #: The fields clmgit's Apply entry holds after it.
    fields: frozenset[FieldPath] = frozenset()


def client_side_managers(entries: Sequence[ManagedFieldsEntry]) -> list[ManagedFieldsEntry]:
    """The managedFields entries of kubectl's client-side apply (see the module docstring)."""
    return [e for e in entries if e.get("operation") == "Update" and not e.get("subresource")
            and (e.get("manager") == CSA_MANAGER
                 or (e.get("manager") == KUBECTL and ANNOTATION_FIELD in _fields(e)))]


def plan(live: Mapping[str, Any], manager: str) -> Takeover | None:
    """The migration of `live` to `manager`'s server-side apply; None when there is none to do."""
    meta: ObjectMeta = live.get("metadata") or ObjectMeta()
    entries = list(meta.get("managedFields") or [])
    taken = client_side_managers(entries)
    if not taken:
        return None
    annotations = dict(meta.get("annotations") or {})
    mine = next((e for e in entries if e.get("manager") == manager
                 and e.get("operation") == "Apply" and not e.get("subresource")), None)
    fields = set().union(*(_fields(e) for e in [*taken, *([mine] if mine else [])]))
    fields.discard(ANNOTATION_FIELD)
    if set(annotations) <= {LAST_APPLIED}:
        fields.discard(ANNOTATIONS)  # the map itself goes with its last key
    target = mine or taken[0]  # becomes clmgit's entry, in its place (csaupgrade's choice)
    merged = {**target, "manager": manager, "operation": "Apply", "fieldsType": "FieldsV1",
              "fieldsV1": to_fields_v1(fields)}
    kept = [merged if e is target else e
            for e in entries if e is target or not any(e is t for t in taken)]
    patch: list[dict[str, Any]] = [
        {"op": "replace", "path": "/metadata/managedFields", "value": kept},
        {"op": "replace", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]},
    ]
    if LAST_APPLIED in annotations:
        token = LAST_APPLIED.replace("~", "~0").replace("/", "~1")  # JSON Pointer, RFC 6901
        patch.append({"op": "remove", "path": f"/metadata/annotations/{token}"})
    return Takeover(tuple(sorted({str(e["manager"]) for e in taken})), patch, frozenset(fields))


def as_if_taken_over(answer: Mapping[str, Any], migration: Takeover,
                     manager: str) -> dict[str, Any]:
    """A dry run's answer, given on the object before its migration, as the apply after it
    would leave the object: the server prunes what clmgit owned through the migration, the
    manifest no longer sets and no other manager owns (a dry run cannot write the migration,
    so it cannot ask the server)."""
    meta: ObjectMeta = answer.get("metadata") or ObjectMeta()
    entries = meta.get("managedFields") or []
    taken = [e for e in client_side_managers(entries) if e.get("manager") in migration.managers]
    mine = [e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"
            and not e.get("subresource")]
    applied = set().union(*(_fields(e) for e in mine))
    others = set().union(*(_fields(e) for e in entries
                           if not any(e is t for t in [*taken, *mine])))
    owned = applied | others
    result = copy.deepcopy(dict(answer))
    for path in sorted(migration.fields - owned, key=len, reverse=True):
        inside_owned = any(len(o) > len(path) and o[:len(path)] == path for o in owned)
        if not inside_owned and not _key_field(path):
            _remove(result, path)
    return result


def _key_field(path: FieldPath) -> bool:
    """A key field of a map-list item, which goes with its item, never alone."""
    return (len(path) > 1 and path[-2].startswith("k:")
            and path[-1][2:] in json.loads(path[-2][2:]))


def _remove(obj: Any, path: FieldPath) -> None:
    """Delete what `path` names in `obj`, if it is there."""
    *parents, last = path
    for element in parents:
        obj = _child(obj, element)
        if obj is None:
            return
    if isinstance(obj, dict) and last.startswith("f:"):
        obj.pop(last[2:], None)
    elif isinstance(obj, list) and (item := _child(obj, last)) is not None:
        obj.remove(item)


def _child(node: Any, element: str) -> Any:
    kind, text = element[:2], element[2:]
    if kind == "f:" and isinstance(node, dict):
        return node.get(text)
    if kind in ("k:", "v:") and isinstance(node, list):
        wanted = json.loads(text)
        for item in node:
            if (kind == "v:" and item == wanted) or (kind == "k:" and isinstance(item, dict)
                                                   and all(item.get(k) == v
                                                           for k, v in wanted.items())):
                return item
    return None


def _fields(entry: ManagedFieldsEntry) -> set[FieldPath]:
    return paths(entry.get("fieldsV1"))
