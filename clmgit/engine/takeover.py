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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clmgit.engine.fieldsv1 import FieldPath, paths, to_fields_v1

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


def client_side_managers(entries: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The managedFields entries of kubectl's client-side apply (see the module docstring)."""
    return [e for e in entries if e.get("operation") == "Update" and not e.get("subresource")
            and (e.get("manager") == CSA_MANAGER
                 or (e.get("manager") == KUBECTL and ANNOTATION_FIELD in _fields(e)))]


def plan(live: Mapping[str, Any], manager: str) -> Takeover | None:
    """The migration of `live` to `manager`'s server-side apply; None when there is none to do."""
    meta = live.get("metadata") or {}
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
    merged = {**(mine or taken[0]), "manager": manager, "operation": "Apply",
              "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(fields)}
    kept = [merged if e is (mine or taken[0]) else e
            for e in entries if e is (mine or taken[0]) or not any(e is t for t in taken)]
    patch: list[dict[str, Any]] = [
        {"op": "replace", "path": "/metadata/managedFields", "value": kept},
        {"op": "replace", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]},
    ]
    if LAST_APPLIED in annotations:
        patch.append({"op": "remove",
                      "path": "/metadata/annotations/" + _pointer_token(LAST_APPLIED)})
    return Takeover(tuple(sorted({str(e["manager"]) for e in taken})), patch)


def _fields(entry: Mapping[str, Any]) -> set[FieldPath]:
    return paths(entry.get("fieldsV1"))


def _pointer_token(key: str) -> str:
    """A key as one JSON Pointer token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")
