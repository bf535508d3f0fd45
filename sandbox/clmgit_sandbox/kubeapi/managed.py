"""Field management: `metadata.managedFields`, and server-side apply built on it.

What holds, as in the real server (structured-merge-diff):
- create/update/patch record, for their manager (operation `Update`), the fields they changed;
  other managers lose those fields; a write that sets `metadata.managedFields` replaces them
  (its own changes recorded on top);
- apply drops the manifest's explicit nulls, merges it into the object, makes the applier own
  exactly the manifest's fields, removes fields it owned before and no longer names (unless
  another manager owns them), and refuses with 409 when it would change a field another manager
  owns, unless forced (then that manager loses the field);
- an apply or update that changes nothing leaves the object, timestamps included, untouched,
  so the store writes nothing and the resourceVersion stays.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from clmgit.engine.fieldsv1 import paths as from_fields_v1
from clmgit.engine.fieldsv1 import to_fields_v1
from clmgit_sandbox.kubeapi.errors import apply_conflict, bad_request
from clmgit_sandbox.kubeapi.fieldset import (
    Path,
    key_fields,
    leaves,
    merge,
    path_string,
    remove_path,
)
from clmgit_sandbox.kubeapi.resources import ResourceType
from clmgit_sandbox.kubeapi.schema import Schema
from clmgit_sandbox.kubeapi.store import Obj

#: Metadata the server owns; never tracked (the `stripSet` of the field manager).
SYSTEM_METADATA = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "selfLink",
        "managedFields",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    }
)


@dataclass
class Entry:
    """One `managedFields` entry: a manager, how it wrote, and the fields it owns."""

    manager: str
    operation: str
    api_version: str
    subresource: str = ""
    time: str | None = None
    fields: set[Path] = field(default_factory=set)

    def ident(self) -> tuple[str, str, str]:
        return (self.manager, self.operation, self.subresource)

    def describe(self) -> str:
        """How conflict messages name a manager."""
        text = f'"{self.manager}"'
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == "Update":
            text += f" using {self.api_version}"
            if self.time:
                text += f" at {self.time}"
        return text

    def encode(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
        }
        if self.time:
            entry["time"] = self.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = to_fields_v1(self.fields)
        if self.subresource:
            entry["subresource"] = self.subresource
        return entry


def decode(obj: dict[str, Any] | None) -> list[Entry]:
    raw = ((obj or {}).get("metadata") or {}).get("managedFields") or []
    return [
        Entry(
            manager=item.get("manager", ""),
            operation=item.get("operation", "Update"),
            api_version=item.get("apiVersion", ""),
            subresource=item.get("subresource", ""),
            time=item.get("time"),
            fields=from_fields_v1(item.get("fieldsV1") or {}),
        )
        for item in raw
        if isinstance(item, dict) and item.get("manager")
    ]


def _store_entries(obj: dict[str, Any], entries: list[Entry]) -> None:
    # The server's order: by operation, then time, manager, apiVersion, subresource.
    kept = sorted(
        (e for e in entries if e.fields),
        key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
    )
    metadata = obj.setdefault("metadata", {})
    if kept:
        metadata["managedFields"] = [e.encode() for e in kept]
    else:
        metadata.pop("managedFields", None)


def tracked(obj: dict[str, Any] | None, rtype: ResourceType, subresource: str) -> dict[str, Any]:
    """The part of `obj` whose fields are managed through this endpoint."""
    obj = obj or {}
    if subresource == "status":
        return {"status": obj["status"]} if "status" in obj else {}
    out = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    if rtype.status_subresource:
        out.pop("status", None)
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SYSTEM_METADATA}
    if metadata:
        out["metadata"] = metadata
    return out


#: Maps and lists a new built-in object has in Go even when the client sent nothing for them
#: (structs that are not pointers, slices without `omitempty`): present before a create, so
#: not added by it. The common workload kinds; any other map a create adds counts as added.
_ZERO_VALUE_NODES: frozenset[Path] = frozenset(
    tuple("f:" + name for name in names)
    for names in [
        ("spec",), ("spec", "containers"), ("spec", "template"), ("spec", "strategy"),
        ("spec", "updateStrategy"), ("spec", "template", "metadata"),
        ("spec", "template", "spec"), ("spec", "template", "spec", "containers"),
    ]
)
#: The field manager never tracks `metadata` itself (its `stripSet`).
_UNTRACKED_NODES = frozenset({("f:metadata",)})


def _diff(
    old: dict[str, Any] | None, new: dict[str, Any], rtype: ResourceType, *, nodes: bool = False
) -> tuple[set[Path], set[Path]]:
    """(added or modified paths, removed paths) from `old` (None: before a create) to `new`.
    `nodes`: an Update also owns each map or list it adds whole, as structured-merge-diff's
    comparison does (the `.` of FieldsV1), and loses those it removes."""
    nodes_before: set[Path] = set()
    nodes_after: set[Path] = set()
    before = leaves(old or {}, rtype.schema, nodes_before)
    after = leaves(new, rtype.schema, nodes_after)
    changed = {path for path, value in after.items() if path not in before or before[path] != value}
    removed = set(before) - set(after)
    if nodes:
        if old is None and rtype.builtin:
            nodes_before |= _ZERO_VALUE_NODES
        changed |= nodes_after - nodes_before - _UNTRACKED_NODES
        removed |= nodes_before - nodes_after - _ZERO_VALUE_NODES - _UNTRACKED_NODES
    return changed, removed


def _without_managed(obj: dict[str, Any] | None) -> dict[str, Any]:
    obj = copy.copy(obj or {})
    obj["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return obj


def _normalized(entries: list[Entry]) -> list[tuple[Any, ...]]:
    return sorted((e.ident(), e.api_version, sorted(e.fields)) for e in entries)


def _split(entries: list[Entry], ident: tuple[str, str, str]) -> tuple[Entry | None, list[Entry]]:
    """(the entry of `ident`, if any; every other entry)."""
    mine = next((e for e in entries if e.ident() == ident), None)
    return mine, [e for e in entries if e.ident() != ident]


def _take_fields(
    others: list[Entry],
    live: Obj | None,
    new: Obj,
    rtype: ResourceType,
    subresource: str,
    force: bool,
    nodes: bool = False,
) -> tuple[set[Path], set[Path]]:
    """Other managers lose the fields this write changes or removes; unless forced, an apply
    refuses instead (409). Returns the (changed, removed) paths."""
    old = tracked(live, rtype, subresource) if live is not None else None
    changed, removed = _diff(old, tracked(new, rtype, subresource), rtype, nodes=nodes)
    conflicts = [(e.describe(), path_string(p)) for e in others for p in sorted(e.fields & changed)]
    if conflicts and not force:
        raise apply_conflict(conflicts)
    for other in others:
        other.fields -= changed | removed
    return changed, removed


def record_update(
    live: Obj | None, new: Obj, *, rtype: ResourceType, manager: str, subresource: str, now: str
) -> None:
    """Update `new.metadata.managedFields` for a create/update/patch by `manager` (in place)."""
    entries = decode(live)
    if "managedFields" in (new.get("metadata") or {}) and not subresource:
        given = decode(new)
        if _normalized(given) != _normalized(entries):
            # The client wrote managedFields itself (a reset, kubectl's migration to server-side
            # apply): they replace the stored ones, and this write's own changes are recorded
            # on top of them, as the server's field manager does.
            entries = given
    mine, others = _split(entries, (manager, "Update", subresource))
    mine = mine or Entry(manager, "Update", rtype.api_version, subresource)
    changed, removed = _take_fields(others, live, new, rtype, subresource, force=True, nodes=True)
    mine.fields = (mine.fields - removed) | changed
    mine.api_version = rtype.api_version
    if changed or removed:
        mine.time = now
    _store_entries(new, others + [mine])


def apply(
    live: Obj,
    config: Obj,
    *,
    rtype: ResourceType,
    manager: str,
    force: bool,
    subresource: str,
    now: str,
) -> Obj:
    """The object after `manager` applies `config` to `live`; raises 409 on unforced conflicts."""
    if (config.get("metadata") or {}).get("managedFields"):
        raise bad_request("metadata.managedFields must be nil")
    last, others = _split(decode(live), (manager, "Apply", subresource))
    part = _without_nulls(tracked(config, rtype, subresource))
    applied = set(leaves(part, rtype.schema))
    merged: dict[str, Any] = merge(copy.deepcopy(live), part, (), rtype.schema)
    if last:
        owned = applied.union(*(e.fields for e in others))
        _prune(merged, last.fields - owned, owned, rtype.schema)
    _take_fields(others, live, merged, rtype, subresource, force)
    unchanged = _without_managed(merged) == _without_managed(live)
    time = (last.time if last else None) if unchanged else now
    _store_entries(
        merged, others + [Entry(manager, "Apply", rtype.api_version, subresource, time, applied)]
    )
    return merged


def _without_nulls(value: Any) -> Any:
    """An apply configuration without its explicit nulls: the server never stores a null, and
    a field the applier owned and now sets to null is no longer in its configuration, so it is
    removed like any field the configuration drops."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value if v is not None]
    return value


def _prune(obj: dict[str, Any], paths: set[Path], owned: set[Path], schema: Schema) -> None:
    """Remove fields the applier dropped and nobody owns; children before their parents."""
    for path in sorted(paths, key=len, reverse=True):
        if any(len(o) > len(path) and o[: len(path)] == path for o in owned):
            continue  # another manager still owns something inside
        if len(path) > 1 and path[-1][2:] in key_fields(path[-2]):
            continue  # a key field goes with its item, never alone
        remove_path(obj, path, schema)
        _drop_emptied(obj, path, owned, schema)


def _drop_emptied(obj: dict[str, Any], path: Path, owned: set[Path], schema: Schema) -> None:
    """Maps emptied by pruning disappear too, as Go's omitempty would drop them."""
    for depth in range(len(path) - 1, 0, -1):
        parent = path[:depth]
        if parent in owned or not parent[-1].startswith("f:"):
            return
        node = _lookup(obj, parent)
        if node not in ({}, []):
            return
        remove_path(obj, parent, schema)


def _lookup(obj: dict[str, Any], path: Path) -> Any:
    node: Any = obj
    for element in path:
        if not (element.startswith("f:") and isinstance(node, dict)):
            return None
        node = node.get(element[2:])
    return node
