"""The Kubernetes side of the engine behind one narrow seam, `KubeClient`, and its in-memory fake.

The engine needs little of the API: resolve a kind (as deletions name it, `deployment` or
`Deployment`) to a served resource; get, list (label and field selectors), JSON-merge-patch and
delete objects; apply one object server-side as field manager `clmgit`; evict a pod. The real
client is `clmgit.adapters.kube.KubeAPI`. `FakeKube` below is enough for unit tests of the engine's
logic; behaviour that depends on the real API (server-side apply, PodDisruptionBudgets) is tested
against the emulator.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from clmgit.errors import ApplyError

Obj = dict[str, Any]
Objs = list[Obj]  # `list` is also a method name below
FIELD_MANAGER = "clmgit"


@dataclass(frozen=True)
class Kind:
    """A served resource, as discovery lists it."""

    api_version: str
    kind: str
    namespaced: bool
    plural: str = ""

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


NODES = Kind("v1", "Node", False, "nodes")
PODS = Kind("v1", "Pod", True, "pods")
PDBS = Kind("policy/v1", "PodDisruptionBudget", True, "poddisruptionbudgets")
NAMESPACES = Kind("v1", "Namespace", False, "namespaces")
CRDS = Kind("apiextensions.k8s.io/v1", "CustomResourceDefinition", False,
            "customresourcedefinitions")


class KubeConflict(ApplyError):
    """A server-side apply was refused: another field manager owns a field clmgit sets."""


class KubeClient(Protocol):
    def resolve(self, kind: str, api_version: str | None = None) -> Kind | None:
        """The served resource for a kind (case-insensitive; plural and singular names too), in
        `api_version` if given; None while nothing serves it (e.g. its CRD is not applied yet)."""
        ...

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> Obj | None: ...

    def list(self, kind: Kind, *, namespace: str | None = None,
             label_selector: str | None = None, field_selector: str | None = None) -> list[Obj]:
        """Objects of `kind` in `namespace`, or in all namespaces when None."""
        ...

    def apply(self, obj: Mapping[str, Any], *, dry_run: bool = False) -> Obj:
        """Server-side apply as field manager `clmgit`, conflicts not forced (`KubeConflict`);
        returns the object as stored (or as it would be, with `dry_run`)."""
        ...

    def patch(self, kind: Kind, name: str, patch: Mapping[str, Any],
              namespace: str | None = None) -> Obj:
        """A JSON merge patch (RFC 7386): `None` values remove keys."""
        ...

    def delete(self, kind: Kind, name: str, *, namespace: str | None = None,
               propagation_policy: str | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> bool:
        """Delete one object; False if it does not exist."""
        ...

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None) -> bool:
        """Evict a pod through the Eviction API. False when a PodDisruptionBudget refuses it
        (429, or the 500 for a pod covered by several budgets): the caller waits and retries.
        A pod already gone counts as evicted."""
        ...


# --- label selectors ------------------------------------------------------------------------


def selector_string(labels: Mapping[str, str]) -> str:
    """An equality-based selector for exactly these labels."""
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def match_labels_selector(selector: Mapping[str, Any] | None) -> str | None:
    """A metav1.LabelSelector as a selector string; None for a selector that selects nothing."""
    labels = dict((selector or {}).get("matchLabels") or {})
    expressions = (selector or {}).get("matchExpressions") or []
    parts = [f"{k}={v}" for k, v in sorted(labels.items())]
    for e in expressions:
        op, values = e.get("operator"), ",".join(e.get("values") or [])
        parts.append({"In": f"{e['key']} in ({values})", "NotIn": f"{e['key']} notin ({values})",
                      "Exists": e["key"], "DoesNotExist": f"!{e['key']}"}[op])
    return ",".join(parts) or None


# --- the in-memory fake ---------------------------------------------------------------------


class FakeKube:
    """An in-memory `KubeClient`: objects by kind, a resourceVersion counter, field selectors
    `spec.nodeName` and `metadata.name`. Apply replaces the given fields (no field ownership);
    eviction honours budgets with an integer `minAvailable` or `maxUnavailable` over Ready pods.
    `calls` records every write as (verb, kind, name)."""

    #: What the fake serves unless told otherwise.
    KINDS = (NODES, PODS, PDBS, NAMESPACES, CRDS)

    def __init__(self, kinds: Sequence[Kind] = KINDS) -> None:
        self.kinds = list(kinds)
        self.objects: dict[tuple[str, str, str], Obj] = {}  # (kind, namespace, name)
        self.calls: list[tuple[str, str, str]] = []
        self._versions = itertools.count(1)

    def add(self, *objects: Obj) -> None:
        """Store objects as they are (status included), as kubelet or a controller would."""
        for obj in objects:
            self._store(copy.deepcopy(obj))

    def resolve(self, kind: str, api_version: str | None = None) -> Kind | None:
        wanted = kind.lower()
        for k in self.kinds:
            if wanted in (k.kind.lower(), k.plural) and api_version in (None, k.api_version):
                return k
        return None

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> Obj | None:
        found = self.objects.get((kind.kind, namespace or "" if kind.namespaced else "", name))
        return copy.deepcopy(found) if found else None

    def list(self, kind: Kind, *, namespace: str | None = None,
             label_selector: str | None = None, field_selector: str | None = None) -> list[Obj]:
        from clmgit.sandbox.kubeapi.selectors import matches_labels, parse_label_selector

        requirements = parse_label_selector(label_selector)
        return [
            copy.deepcopy(obj) for (k, ns, _), obj in sorted(self.objects.items())
            if k == kind.kind and namespace in (None, ns)
            and matches_labels(requirements, obj) and _matches_fields(field_selector, obj)
        ]

    def apply(self, obj: Mapping[str, Any], *, dry_run: bool = False) -> Obj:
        kind = self.resolve(obj["kind"], obj["apiVersion"])
        if kind is None:
            raise ApplyError(f"no {obj['kind']} is served in {obj['apiVersion']}")
        meta = obj["metadata"]
        namespace = (meta.get("namespace") or "default") if kind.namespaced else None
        live = self.get(kind, meta["name"], namespace)
        new = _merge_patch(live or {}, obj)
        if kind.namespaced:
            new["metadata"]["namespace"] = namespace
        if live is not None and new == live or dry_run:
            return new
        self.calls.append(("apply", kind.kind, meta["name"]))
        if kind == CRDS:
            self._learn(new)
        return self._store(new)

    def patch(self, kind: Kind, name: str, patch: Mapping[str, Any],
              namespace: str | None = None) -> Obj:
        live = self.get(kind, name, namespace)
        if live is None:
            raise ApplyError(f"{kind.kind} {name} not found")
        self.calls.append(("patch", kind.kind, name))
        return self._store(_merge_patch(live, patch))

    def delete(self, kind: Kind, name: str, *, namespace: str | None = None,
               propagation_policy: str | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> bool:
        key = (kind.kind, namespace or "" if kind.namespaced else "", name)
        if key not in self.objects:
            return False
        if not dry_run:
            self.calls.append(("delete", kind.kind, name))
            del self.objects[key]
        return True

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None) -> bool:
        pod = self.get(PODS, name, namespace)
        if pod is None:
            return True
        if _ready(pod) and any(not self._allows_disruption(pdb)
                               for pdb in self._budgets_of(pod)):
            return False
        return self.delete(PODS, name, namespace=namespace)

    def _budgets_of(self, pod: Obj) -> Objs:
        from clmgit.sandbox.kubeapi.selectors import matches_labels, parse_label_selector

        return [pdb for pdb in self.list(PDBS, namespace=pod["metadata"]["namespace"])
                if (s := match_labels_selector(pdb["spec"].get("selector")))
                and matches_labels(parse_label_selector(s), pod)]

    def _allows_disruption(self, pdb: Obj) -> bool:
        selector = match_labels_selector(pdb["spec"].get("selector"))
        pods = self.list(PODS, namespace=pdb["metadata"]["namespace"], label_selector=selector)
        healthy = sum(1 for p in pods if _ready(p))
        spec = pdb["spec"]
        if "maxUnavailable" in spec:
            return len(pods) - healthy < int(spec["maxUnavailable"])
        return healthy > int(spec.get("minAvailable", 0))

    def _learn(self, crd: Obj) -> None:
        spec, names = crd["spec"], crd["spec"]["names"]
        for version in spec.get("versions") or []:
            self.kinds.append(Kind(f"{spec['group']}/{version['name']}", names["kind"],
                                   spec.get("scope", "Namespaced") == "Namespaced",
                                   names["plural"]))

    def _store(self, obj: Obj) -> Obj:
        kind = self.resolve(obj["kind"], obj.get("apiVersion"))
        namespaced = kind.namespaced if kind else bool(obj["metadata"].get("namespace"))
        meta = obj["metadata"]
        meta["resourceVersion"] = str(next(self._versions))
        namespace = meta.get("namespace", "") if namespaced else ""
        self.objects[(obj["kind"], namespace, meta["name"])] = obj
        return copy.deepcopy(obj)


def _merge_patch(target: Any, patch: Any) -> Any:
    # The fake patches and matches labels with the emulator's code, imported on use so that
    # production never loads the emulator.
    from clmgit.sandbox.kubeapi.patch import merge_patch

    return merge_patch(target, patch)


def _ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _matches_fields(selector: str | None, obj: Obj) -> bool:
    for requirement in filter(None, (selector or "").split(",")):
        path, _, wanted = requirement.partition("=")
        value: Any = obj
        for part in path.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if (value or "") != wanted:
            return False
    return True
