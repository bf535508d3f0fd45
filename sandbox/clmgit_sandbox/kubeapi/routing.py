"""From a request path to what it addresses: a resource, a namespace, a name, a subresource.

`/api/v1/namespaces/ns/pods/p/status` addresses the `status` of pod `p` in `ns`;
`/api/v1/pods` every pod in every namespace; `/api/v1/namespaces/ns` the namespace itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from clmgit_sandbox.kubeapi.resources import ResourceRegistry, ResourceType


@dataclass(frozen=True)
class Route:
    rtype: ResourceType
    namespace: str | None  # None: cluster-scoped, or every namespace
    name: str | None  # None: the collection
    subresource: str = ""

    @property
    def resource_label(self) -> str:
        """`pods`, `deployments.apps`, `pods/eviction`: how statistics name what was called."""
        label = f"{self.rtype.plural}.{self.rtype.group}" if self.rtype.group else self.rtype.plural
        return f"{label}/{self.subresource}" if self.subresource else label


def _group_version(parts: list[str]) -> tuple[str, str, list[str]] | None:
    if len(parts) >= 2 and parts[0] == "api":
        return "", parts[1], parts[2:]
    if len(parts) >= 3 and parts[0] == "apis":
        return parts[1], parts[2], parts[3:]
    return None


def _subresource_allowed(rtype: ResourceType, subresource: str) -> bool:
    if subresource == "status":
        return rtype.status_subresource
    if subresource == "scale":
        return rtype.scalable
    return subresource in ("eviction", "log") and rtype.builtin and rtype.kind == "Pod"


def resolve(registry: ResourceRegistry, path: str) -> Route | None:
    """The route of a resource path, or None if the path names nothing served."""
    parts = [part for part in path.split("/") if part]
    found = _group_version(parts)
    if found is None or not found[2]:
        return None
    group, version, rest = found
    namespace = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        inner = registry.lookup(group, version, rest[2])
        if inner is not None and inner.namespaced:
            namespace, rest = rest[1], rest[2:]
    rtype = registry.lookup(group, version, rest[0])
    if rtype is None or len(rest) > 3:
        return None
    if namespace is not None and not rtype.namespaced:
        return None
    if namespace is None and rtype.namespaced and len(rest) > 1:
        return None
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else ""
    if subresource and not _subresource_allowed(rtype, subresource):
        return None
    return Route(rtype, namespace, name, subresource)
