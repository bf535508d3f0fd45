"""Deletion: delete options, finalizers, and the garbage collector's owner-reference cascade.

The model is the real one, run synchronously. DELETE marks the object (`deletionTimestamp`) and
adds the finalizer of its propagation policy (`orphan`, `foregroundDeletion`); an object without
finalizers is removed at once. `collect()` then plays the garbage collector, namespace controller
and CRD finalizer until nothing more can move:
- `orphan`: owner references to the object are removed from its dependents;
- `foregroundDeletion`: dependents are deleted first, the owner when none is left;
- once an object is gone, dependents with no other existing owner are deleted (Background);
- a Namespace deletes its contents, a CRD its custom resources, before they go themselves.
Objects with other finalizers stay, marked, until a client removes the finalizers.

Graceful deletion is not emulated: nothing runs, so a pod is removed at once whatever
`gracePeriodSeconds` says (nothing would ever confirm its termination).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clmgit_sandbox.kubeapi.cluster import CRD_CLEANUP_FINALIZER, Cluster
from clmgit_sandbox.kubeapi.errors import FieldError, bad_request, conflict, invalid, status_body
from clmgit_sandbox.kubeapi.messages import parse_bool, parse_int
from clmgit_sandbox.kubeapi.resources import ORPHAN_BY_DEFAULT, RETURNS_DELETED_OBJECT, ResourceType
from clmgit_sandbox.kubeapi.store import Key, Obj

POLICIES = ("Foreground", "Background", "Orphan")
_POLICY_FINALIZERS = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}


@dataclass(frozen=True)
class DeleteOptions:
    policy: str | None = None
    grace_period: int | None = None
    uid: str | None = None
    resource_version: str | None = None
    dry_run: bool = False

    @classmethod
    def parse(cls, body: dict[str, Any] | None, query: dict[str, str]) -> DeleteOptions:
        """From the request body if it has one, else from the query (as the server does)."""
        if body:
            source: dict[str, Any] = body
            dry_run = body.get("dryRun") or []
        else:
            source = query
            dry_run = [query["dryRun"]] if "dryRun" in query else []
        policy = source.get("propagationPolicy")
        orphan = source.get("orphanDependents")
        if policy is None and orphan is not None:
            policy = "Orphan" if parse_bool("orphanDependents", orphan) else "Background"
        if policy is not None and policy not in POLICIES:
            supported = 'supported values: "Foreground", "Background", "Orphan"'
            error = FieldError("FieldValueNotSupported", "propagationPolicy", supported, policy)
            raise invalid("", "DeleteOptions", "", [error])
        preconditions = (body or {}).get("preconditions") or {}
        return cls(
            policy=policy,
            grace_period=parse_int("gracePeriodSeconds", source.get("gracePeriodSeconds")),
            uid=preconditions.get("uid"),
            resource_version=preconditions.get("resourceVersion"),
            dry_run=parse_dry_run(dry_run),
        )


def parse_dry_run(values: list[str]) -> bool:
    for value in values:
        if value != "All":
            raise bad_request(f'Invalid dry run value "{value}", only "All" is supported')
    return bool(values)


def delete(
    cluster: Cluster, rtype: ResourceType, live: Obj, options: DeleteOptions
) -> tuple[int, Obj]:
    """Delete `live`; the response: the object if still there or wanted back, else a Status."""
    _check_preconditions(rtype, live, options)
    if live["metadata"].get("deletionTimestamp"):
        return 200, cluster.present(rtype, live)
    policy = options.policy or (
        "Orphan" if (rtype.group, rtype.kind) in ORPHAN_BY_DEFAULT else "Background"
    )
    marked = _marked(cluster, rtype, live, policy)
    if not options.dry_run and _pending(rtype, marked):
        marked = cluster.store.put(rtype.key, marked)
        collect(cluster)
    elif not options.dry_run:
        # Nothing to wait for: gone at once, so a watch sees one DELETED and no MODIFIED.
        meta = marked["metadata"]
        cluster.store.remove(rtype.key, meta.get("namespace", ""), meta["name"])
        _release_dependents(cluster, meta["uid"])
        collect(cluster)
    if _pending(rtype, marked):
        return 200, cluster.present(rtype, marked)
    if rtype.builtin and rtype.kind in RETURNS_DELETED_OBJECT:
        return 200, cluster.present(rtype, marked)
    meta = marked["metadata"]
    details = {"name": meta["name"], "group": rtype.group, "kind": rtype.plural, "uid": meta["uid"]}
    return 200, status_body(0, status="Success", details=details)


def _check_preconditions(rtype: ResourceType, live: Obj, options: DeleteOptions) -> None:
    meta = live["metadata"]
    for label, wanted, actual in (
        ("UID", options.uid, meta["uid"]),
        ("ResourceVersion", options.resource_version, meta["resourceVersion"]),
    ):
        if wanted and wanted != actual:
            why = (
                f"Precondition failed: {label} in precondition: {wanted}, "
                f"{label} in object meta: {actual}"
            )
            raise conflict(rtype.group, rtype.plural, meta["name"], why)


def _marked(cluster: Cluster, rtype: ResourceType, obj: Obj, policy: str) -> Obj:
    meta = obj["metadata"]
    meta["deletionTimestamp"] = cluster.now()
    meta["deletionGracePeriodSeconds"] = 0
    finalizers = meta.setdefault("finalizers", [])
    extra = [_POLICY_FINALIZERS.get(policy)]
    if rtype.builtin and rtype.kind == "CustomResourceDefinition":
        extra.append(CRD_CLEANUP_FINALIZER)
    finalizers.extend(f for f in extra if f and f not in finalizers)
    if not finalizers:
        del meta["finalizers"]
    if rtype.builtin and rtype.kind == "Namespace":
        obj.setdefault("status", {})["phase"] = "Terminating"
    return obj


def _pending(rtype: ResourceType, obj: Obj) -> bool:
    """Whether a marked object still waits for a finalizer."""
    if obj["metadata"].get("finalizers"):
        return True
    return (
        rtype.builtin
        and rtype.kind == "Namespace"
        and bool((obj.get("spec") or {}).get("finalizers"))
    )


def collect(cluster: Cluster) -> None:
    """Advance every marked object as far as it can go (garbage collector and finalizers)."""
    progress = True
    while progress:
        marked = cluster.store.find(lambda o: bool(o["metadata"].get("deletionTimestamp")))
        progress = any([_advance(cluster, key, obj) for key, obj in marked])


def _advance(cluster: Cluster, key: Key, obj: Obj) -> bool:
    rtype = cluster.type_of(key)
    finalizers = obj["metadata"].get("finalizers") or []
    uid = obj["metadata"]["uid"]
    if "orphan" in finalizers:
        for dep_key, dependent in _dependents(cluster, uid):
            _drop_owner(cluster, dep_key, dependent, uid)
        return _drop_finalizer(cluster, key, obj, "orphan")
    if "foregroundDeletion" in finalizers:
        if _dependents(cluster, uid):
            return _release_dependents(cluster, uid)
        return _drop_finalizer(cluster, key, obj, "foregroundDeletion")
    if CRD_CLEANUP_FINALIZER in finalizers:
        return _cleanup_crd(cluster, key, obj)
    if rtype.builtin and rtype.kind == "Namespace" and (obj.get("spec") or {}).get("finalizers"):
        return _cleanup_namespace(cluster, key, obj)
    if finalizers:
        return False  # a client's finalizer: wait for the client
    meta = obj["metadata"]
    cluster.store.remove(key, meta.get("namespace", ""), meta["name"])
    _release_dependents(cluster, uid)
    return True


def _dependents(cluster: Cluster, uid: str) -> list[tuple[Key, Obj]]:
    def owned(obj: Obj) -> bool:
        return any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or [])

    return cluster.store.find(owned)


def _drop_owner(cluster: Cluster, key: Key, obj: Obj, uid: str) -> None:
    refs = [ref for ref in obj["metadata"]["ownerReferences"] if ref.get("uid") != uid]
    if refs:
        obj["metadata"]["ownerReferences"] = refs
    else:
        del obj["metadata"]["ownerReferences"]
    cluster.store.put(key, obj)


def _drop_finalizer(cluster: Cluster, key: Key, obj: Obj, finalizer: str) -> bool:
    meta = obj["metadata"]
    meta["finalizers"] = [f for f in meta["finalizers"] if f != finalizer]
    if not meta["finalizers"]:
        del meta["finalizers"]
    cluster.store.put(key, obj)
    return True


def _mark_all(cluster: Cluster, objects: list[tuple[Key, Obj]]) -> bool:
    """Mark for deletion (Background) those not marked yet; whether any was."""
    progress = False
    for key, obj in objects:
        if not obj["metadata"].get("deletionTimestamp"):
            cluster.store.put(key, _marked(cluster, cluster.type_of(key), obj, "Background"))
            progress = True
    return progress


def _release_dependents(cluster: Cluster, uid: str) -> bool:
    """An owner is going: dependents with another existing owner just lose the reference, the
    others are deleted (Background). Whether anything changed."""
    progress = False
    for key, dependent in _dependents(cluster, uid):
        others = [r for r in dependent["metadata"]["ownerReferences"] if r.get("uid") != uid]
        if any(cluster.store.by_uid(r.get("uid", "")) for r in others):
            _drop_owner(cluster, key, dependent, uid)
            progress = True
        else:
            progress = _mark_all(cluster, [(key, dependent)]) or progress
    return progress


def _cleanup_crd(cluster: Cluster, key: Key, crd: Obj) -> bool:
    spec = crd.get("spec") or {}
    stored_key = (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
    remaining = cluster.store.list_objects(stored_key)
    if remaining:
        return _mark_all(cluster, [(stored_key, obj) for obj in remaining])
    cluster.registry.unregister_crd(crd["metadata"]["name"])
    return _drop_finalizer(cluster, key, crd, CRD_CLEANUP_FINALIZER)


def _cleanup_namespace(cluster: Cluster, key: Key, namespace: Obj) -> bool:
    name = namespace["metadata"]["name"]
    contents = cluster.store.find(lambda o: o["metadata"].get("namespace") == name)
    if contents:
        return _mark_all(cluster, contents)
    namespace["spec"]["finalizers"] = []
    cluster.store.put(key, namespace)
    return True
