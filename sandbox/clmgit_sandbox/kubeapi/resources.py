"""The kinds the emulator serves: built-in ones, and custom resources registered from their CRDs.

A `ResourceType` is one (group, version, plural) as discovery lists it. Objects are stored per
(group, plural), so every served version of a custom resource reads and writes the same objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from clmgit_sandbox.kubeapi.schema import BUILTIN_SCHEMA, CRDSchema, Schema

VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

#: Kinds whose DELETE answers with the deleted object instead of a `Status` (`ReturnDeletedObject`).
RETURNS_DELETED_OBJECT = {"Pod", "Service", "ServiceAccount", "StorageClass"}

#: Built-in kinds with a `scale` subresource.
SCALABLE = {"Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"}

#: Kinds that are only ever created, answered and not stored (`kubectl auth can-i`).
REVIEW_KINDS = {"SelfSubjectAccessReview", "SelfSubjectRulesReview"}

#: Kinds whose default propagation policy is Orphan (batch/v1 Job, for backwards compatibility).
ORPHAN_BY_DEFAULT = {("batch", "Job")}


@dataclass(frozen=True)
class ResourceType:
    """One served resource: what discovery lists and what a URL path resolves to."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    status_subresource: bool = False
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    singular: str = ""
    builtin: bool = True
    schema: Schema = field(default=BUILTIN_SCHEMA, compare=False, repr=False)
    #: What discovery lists; the review kinds (SelfSubjectAccessReview, ...) only take create.
    verbs: tuple[str, ...] = VERBS
    #: A CRD version's additionalPrinterColumns (see `table.py`).
    printer_columns: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)

    @property
    def scalable(self) -> bool:
        """Has a `scale` subresource (autoscaling/v1 Scale)."""
        return self.builtin and self.kind in SCALABLE

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        """Where objects of this resource are stored, shared by all its versions."""
        return (self.group, self.plural)

    @property
    def list_kind(self) -> str:
        return self.kind + "List"


def _builtin(
    api_version: str,
    kind: str,
    plural: str,
    *,
    namespaced: bool = True,
    status: bool = False,
    short: tuple[str, ...] = (),
    all_category: bool = False,
    verbs: tuple[str, ...] = VERBS,
) -> ResourceType:
    group, _, version = api_version.rpartition("/")
    return ResourceType(
        verbs=verbs,
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        namespaced=namespaced,
        status_subresource=status,
        short_names=short,
        categories=("all",) if all_category else (),
        singular=kind.lower(),
    )


BUILTINS: tuple[ResourceType, ...] = (
    _builtin("v1", "Namespace", "namespaces", namespaced=False, status=True, short=("ns",)),
    _builtin("v1", "Node", "nodes", namespaced=False, status=True, short=("no",)),
    _builtin("v1", "Pod", "pods", status=True, short=("po",), all_category=True),
    _builtin("v1", "Service", "services", status=True, short=("svc",), all_category=True),
    _builtin("v1", "ConfigMap", "configmaps", short=("cm",)),
    _builtin("v1", "Event", "events", short=("ev",)),
    _builtin("v1", "Endpoints", "endpoints", short=("ep",)),
    _builtin("v1", "PersistentVolumeClaim", "persistentvolumeclaims", status=True, short=("pvc",)),
    _builtin("v1", "PersistentVolume", "persistentvolumes", namespaced=False, status=True,
             short=("pv",)),
    _builtin("v1", "ReplicationController", "replicationcontrollers", status=True, short=("rc",),
             all_category=True),
    _builtin("networking.k8s.io/v1", "Ingress", "ingresses", status=True, short=("ing",)),
    _builtin("authorization.k8s.io/v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
             namespaced=False, verbs=("create",)),
    _builtin("authorization.k8s.io/v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews",
             namespaced=False, verbs=("create",)),
    _builtin("v1", "Secret", "secrets"),
    _builtin("v1", "ResourceQuota", "resourcequotas", status=True, short=("quota",)),
    _builtin("v1", "LimitRange", "limitranges", short=("limits",)),
    _builtin("v1", "ServiceAccount", "serviceaccounts", short=("sa",)),
    _builtin(
        "apps/v1", "Deployment", "deployments", status=True, short=("deploy",), all_category=True
    ),
    _builtin("apps/v1", "DaemonSet", "daemonsets", status=True, short=("ds",), all_category=True),
    _builtin(
        "apps/v1", "StatefulSet", "statefulsets", status=True, short=("sts",), all_category=True
    ),
    _builtin("apps/v1", "ReplicaSet", "replicasets", status=True, short=("rs",), all_category=True),
    _builtin("batch/v1", "Job", "jobs", status=True, all_category=True),
    _builtin("batch/v1", "CronJob", "cronjobs", status=True, short=("cj",), all_category=True),
    _builtin(
        "policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", status=True, short=("pdb",)
    ),
    _builtin("rbac.authorization.k8s.io/v1", "Role", "roles"),
    _builtin("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"),
    _builtin("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", namespaced=False),
    _builtin(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        namespaced=False,
    ),
    _builtin(
        "storage.k8s.io/v1", "StorageClass", "storageclasses", namespaced=False, short=("sc",)
    ),
    _builtin(
        "scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", namespaced=False, short=("pc",)
    ),
    _builtin("storage.k8s.io/v1", "CSIDriver", "csidrivers", namespaced=False),
    _builtin("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", status=True,
             short=("hpa",), all_category=True),
    _builtin("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
             "validatingwebhookconfigurations", namespaced=False),
    _builtin("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration",
             "mutatingwebhookconfigurations", namespaced=False),
    _builtin("apiregistration.k8s.io/v1", "APIService", "apiservices", namespaced=False,
             status=True),
    _builtin(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        namespaced=False,
        status=True,
        short=("crd", "crds"),
    ),
)

#: Served only as `pods/eviction`, never as a resource of its own.
EVICTION_GROUP_VERSION = ("policy", "v1")


def types_from_crd(crd: dict[str, Any]) -> list[ResourceType]:
    """The resource types a CRD serves, one per served version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    kind = names.get("kind", "")
    types = []
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
        types.append(
            ResourceType(
                group=spec.get("group", ""),
                version=version.get("name", ""),
                kind=kind,
                plural=names.get("plural", ""),
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                status_subresource="status" in subresources,
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                singular=names.get("singular") or kind.lower(),
                builtin=False,
                schema=CRDSchema(schema),
                printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
            )
        )
    return types


_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key for Kubernetes version order: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > foo."""
    match = _VERSION_RE.match(version)
    if not match:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), version)


class ResourceRegistry:
    """Looks resource types up by URL parts or by apiVersion/kind; learns CRDs as they come."""

    def __init__(self) -> None:
        self._types: list[ResourceType] = list(BUILTINS)
        self._crd_types: dict[str, list[ResourceType]] = {}

    def all(self) -> list[ResourceType]:
        return self._types + [t for types in self._crd_types.values() for t in types]

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        for rtype in self.all():
            if (rtype.group, rtype.version, rtype.plural) == (group, version, plural):
                return rtype
        return None

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        for rtype in self.all():
            if rtype.api_version == api_version and rtype.kind == kind:
                return rtype
        return None

    def by_key(self, key: tuple[str, str]) -> ResourceType | None:
        """The preferred served version of what is stored under `key`."""
        candidates = [t for t in self.all() if t.key == key]
        return min(candidates, key=lambda t: version_priority(t.version)) if candidates else None

    def group_versions(self) -> dict[str, list[str]]:
        """Group name to served versions, preferred first; the core group is left out."""
        groups: dict[str, set[str]] = {}
        for rtype in self.all():
            if rtype.group:
                groups.setdefault(rtype.group, set()).add(rtype.version)
        return {group: sorted(vs, key=version_priority) for group, vs in groups.items()}

    def register_crd(self, crd: dict[str, Any]) -> None:
        self._crd_types[crd["metadata"]["name"]] = types_from_crd(crd)

    def unregister_crd(self, name: str) -> None:
        self._crd_types.pop(name, None)
