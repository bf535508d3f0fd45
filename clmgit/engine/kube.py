"""The Kubernetes side of the engine behind one narrow seam, `KubeClient`.

The engine needs little of the API: resolve a kind (as deletions name it, `deployment` or
`Deployment`) to a served resource; get, list (label and field selectors), JSON-merge-patch and
delete objects; apply one object server-side as field manager `clmgit`; evict a pod. The real
client is `clmgit.adapters.kube.KubeAPI`. `FakeKube` (clmgit_sandbox.doubles) is enough for
unit tests of the engine's logic; behaviour that depends on the real API (server-side apply,
PodDisruptionBudgets) is tested against the emulator.
"""

from __future__ import annotations

from collections.abc import Mapping
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


NODES = Kind("v1", "Node", False, "nodes")
PODS = Kind("v1", "Pod", True, "pods")
PDBS = Kind("policy/v1", "PodDisruptionBudget", True, "poddisruptionbudgets")
NAMESPACES = Kind("v1", "Namespace", False, "namespaces")
CRDS = Kind("apiextensions.k8s.io/v1", "CustomResourceDefinition", False,
            "customresourcedefinitions")


class KubeConflict(ApplyError):
    """A server-side apply was refused: another field manager owns a field clmgit sets.
    `managers`: the managers the server named, so a caller can tell whose fields they are."""

    def __init__(self, message: str, *, managers: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.managers = managers


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
        returns the object as stored (or as it would be, with `dry_run`). An object kubectl
        applied client-side is taken over first (`clmgit.engine.takeover`)."""
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
