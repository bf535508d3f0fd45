"""Step 7 of the engine (docs/explanation/design.md): Kubernetes manifests and declarative
deletions.

Manifests are applied one object at a time with server-side apply as field manager `clmgit`, in
the run order of `config.render` (components in sorted order, files sorted, documents in file
order), with one refinement: an object's Namespace and the CRD of its kind, when they are among
the manifests, are applied just before it if they have not been yet. Nothing else moves.

Conflicts are never forced: the design asks for server-side apply and names no case for forcing.
A conflict means another manager (a human with kubectl, an autoscaler owning `replicas`) holds a
field that clmgit also sets; taking it silently would fight that manager, so the run fails and
names the object.

An object's action compares the live object with the apply's answer (a dry run's: `dryRun=All`)
leaving out bookkeeping (managedFields, resourceVersion, generation, kubectl's last-applied
annotation): an object CLM applied and clmgit takes over with the same manifest is "unchanged",
though its field ownership moved (see `takeover`). A custom resource whose CRD is only about to
be created is reported as created without asking the server.

Deletions (`manifests/deletions.yaml`): a kind nothing serves yet and a missing object are no-ops.
A namespaced kind without a namespace means `kube-system`, as in CLM.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from clmgit.config.deletions import Deletion
from clmgit.config.render import Component, ManifestObject
from clmgit.engine import takeover
from clmgit.engine.clock import Backoff, Clock, SystemClock, wait_until
from clmgit.engine.kube import FIELD_MANAGER, Kind, KubeClient, Obj, selector_string
from clmgit.engine.kubeobjects import Metadata
from clmgit.errors import ApplyError

DEFAULT_NAMESPACE = "default"
DELETION_NAMESPACE = "kube-system"
#: How long a custom resource waits for the kind of a CRD applied just before it to be served.
CRD_BACKOFF = Backoff(initial=0.5, factor=2, maximum=5, timeout=120)

Action = Literal["created", "configured", "unchanged"]


@dataclass(frozen=True)
class ObjectChange:
    action: Action
    kind: str
    namespace: str | None
    name: str
    component: str = ""
    #: The client-side managers (kubectl's) whose fields clmgit took over (dry: would take).
    taken_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeletedObject:
    kind: str
    namespace: str | None
    name: str


# --- order ----------------------------------------------------------------------------------


def _crd_target(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    """(group, kind) a CRD serves; None for anything else."""
    if obj.get("kind") != "CustomResourceDefinition":
        return None
    spec = obj.get("spec") or {}
    return str(spec.get("group", "")), str((spec.get("names") or {}).get("kind", ""))


def ordered(components: Sequence[Component]) -> list[tuple[str, ManifestObject]]:
    """(component, object) in run order, each object's Namespace and CRD pulled before it."""
    namespaces = {m.name: (c.name, m) for c in components for m in c.objects
                  if m.kind == "Namespace" and m.obj.get("apiVersion") == "v1"}
    crds = {t: (c.name, m) for c in components for m in c.objects
            if (t := _crd_target(m.obj)) is not None}
    placed: set[int] = set()
    out: list[tuple[str, ManifestObject]] = []

    def place(component: str, m: ManifestObject) -> None:
        if id(m) not in placed:
            placed.add(id(m))
            out.append((component, m))

    for component in components:
        for m in component.objects:
            if m.namespace and m.namespace in namespaces:
                place(*namespaces[m.namespace])
            group = str(m.obj["apiVersion"]).rpartition("/")[0]
            if (group, m.kind) in crds:
                place(*crds[group, m.kind])
            place(component.name, m)
    return out


# --- apply ----------------------------------------------------------------------------------


def apply_manifests(kube: KubeClient, components: Sequence[Component], *, dry_run: bool = False,
                    clock: Clock | None = None,
                    after: Sequence[Component] = ()) -> list[ObjectChange]:
    """Apply every manifest object; what happened to each, in the order applied. `after`: the
    components applied just before, whose CRDs a dry run has not really created."""
    clock = clock or SystemClock()
    objects = ordered(components)
    pending_crds = {t for _, m in [*objects, *ordered(after)]
                    if (t := _crd_target(m.obj)) is not None}
    changes = []
    new_namespaces: set[str] = set()  # created by this dry run, so not there to ask
    for component, m in objects:
        kind = _kind_for(kube, m, pending=pending_crds, clock=clock, dry_run=dry_run)
        if kind is None or (kind.namespaced and m.namespace in new_namespaces):
            # Dry run: its CRD or its namespace would be created first, so it would be too.
            changes.append(ObjectChange("created", m.kind, m.namespace, m.name, component))
            continue
        change = _apply_one(kube, kind, m, component, dry_run=dry_run)
        if dry_run and change.kind == "Namespace" and change.action == "created":
            new_namespaces.add(m.name)
        changes.append(change)
        if not dry_run and (target := _crd_target(m.obj)) is not None:
            pending_crds.discard(target)
    return changes


def _kind_for(kube: KubeClient, m: ManifestObject, *, pending: set[tuple[str, str]],
              clock: Clock, dry_run: bool) -> Kind | None:
    api_version = str(m.obj["apiVersion"])
    kind = kube.resolve(m.kind, api_version)
    if kind is not None:
        return kind
    served_by_new_crd = (api_version.rpartition("/")[0], m.kind) in pending
    if not served_by_new_crd:
        raise ApplyError(f"{m.path}: the cluster serves no {m.kind} in {api_version} and no "
                         "manifest defines it; add its CustomResourceDefinition")
    if dry_run:
        return None
    # Applied, not yet served: a real API server establishes a new CRD within seconds.
    return wait_until(lambda: kube.resolve(m.kind, api_version), lambda k: k is not None,
                      clock=clock, backoff=CRD_BACKOFF,
                      what=f"the API server to serve {m.kind} in {api_version}")


def _apply_one(kube: KubeClient, kind: Kind, m: ManifestObject, component: str, *,
               dry_run: bool) -> ObjectChange:
    namespace = (m.namespace or DEFAULT_NAMESPACE) if kind.namespaced else None
    live = kube.get(kind, m.name, namespace)
    migration = takeover.plan(live, FIELD_MANAGER) if live is not None else None
    result = kube.apply(m.obj, dry_run=dry_run)
    if live is None:
        action: Action = "created"
    else:
        action = "configured" if _comparable(result) != _comparable(live) else "unchanged"
    return ObjectChange(action, kind.kind, namespace, m.name, component,
                        taken_from=migration.managers if migration else ())


def _comparable(obj: Obj) -> Obj:
    """An object without its bookkeeping: who owns which field, its versions, and the annotation
    of kubectl's client-side apply that a takeover removes. What is left is what a manifest
    sets, so a takeover that changes only ownership leaves an object "unchanged"."""
    meta = {k: v for k, v in obj["metadata"].items()
            if k not in ("managedFields", "resourceVersion", "generation")}
    annotations = {k: v for k, v in (meta.pop("annotations", None) or {}).items()
                   if k != takeover.LAST_APPLIED}
    if annotations:
        meta["annotations"] = annotations
    return {**obj, "metadata": meta}


# --- deletions ------------------------------------------------------------------------------


def apply_deletions(kube: KubeClient, deletions: Sequence[Deletion], *,
                    dry_run: bool = False) -> list[DeletedObject]:
    """Delete what each entry names, in order; what was (or, dry, would be) deleted."""
    deleted: list[DeletedObject] = []
    for deletion in deletions:
        kind = kube.resolve(deletion.kind)
        if kind is None:
            continue  # nothing serves that kind (yet): nothing to delete
        namespace = (deletion.namespace or DELETION_NAMESPACE) if kind.namespaced else None
        for name in _targets(kube, kind, deletion, namespace):
            if kube.delete(kind, name, namespace=namespace,
                           propagation_policy=deletion.propagation_policy,
                           grace_period_seconds=deletion.grace_period_seconds, dry_run=dry_run):
                deleted.append(DeletedObject(kind.kind, namespace, name))
    return deleted


def _targets(kube: KubeClient, kind: Kind, d: Deletion, namespace: str | None) -> Iterable[str]:
    if d.name:
        return [d.name]
    selector = d.selector or selector_string(d.labels)
    found = cast(list[Metadata], kube.list(kind, namespace=namespace, label_selector=selector))
    return [obj["metadata"]["name"] for obj in found
            if d.has_owner is None
            or bool(obj["metadata"].get("ownerReferences")) == d.has_owner]
