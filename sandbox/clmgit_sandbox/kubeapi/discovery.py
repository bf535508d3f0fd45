"""Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>[/<version>]`.

Shapes follow the API server's legacy (unaggregated) discovery, which the Python client's
`DynamicClient` reads: an `APIGroupList` of groups with their versions and preferred version,
and per group-version an `APIResourceList` with each resource, its subresources
(`pods/status`, `pods/eviction`) and their verbs.
"""

from __future__ import annotations

from typing import Any

from clmgit_sandbox.kubeapi.resources import (
    EVICTION_GROUP_VERSION,
    ResourceRegistry,
    ResourceType,
)

VERSION_INFO = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.0-clmgit.sandbox",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2024-08-13T00:00:00Z",
    "goVersion": "go1.22.5",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def core_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def group_list(registry: ResourceRegistry) -> dict[str, Any]:
    groups = [
        _group(name, versions) for name, versions in sorted(registry.group_versions().items())
    ]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def group(registry: ResourceRegistry, name: str) -> dict[str, Any] | None:
    versions = registry.group_versions().get(name)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}


def _resource(rtype: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": rtype.plural,
        "singularName": rtype.singular,
        "namespaced": rtype.namespaced,
        "kind": rtype.kind,
        "verbs": list(rtype.verbs),
    }
    if rtype.short_names:
        entry["shortNames"] = list(rtype.short_names)
    if rtype.categories:
        entry["categories"] = list(rtype.categories)
    return entry


def _subresources(rtype: ResourceType) -> list[dict[str, Any]]:
    entries = []
    base = {"singularName": "", "namespaced": rtype.namespaced}
    if rtype.status_subresource:
        entries.append(
            {
                "name": f"{rtype.plural}/status",
                **base,
                "kind": rtype.kind,
                "verbs": ["get", "patch", "update"],
            }
        )
    if rtype.builtin and rtype.kind == "Pod":
        group_name, version = EVICTION_GROUP_VERSION
        eviction = {
            "group": group_name,
            "version": version,
            "kind": "Eviction",
            "verbs": ["create"],
        }
        entries.append({"name": "pods/eviction", **base, **eviction})
        entries.append({"name": "pods/log", **base, "kind": "Pod", "verbs": ["get"]})
    if rtype.scalable:
        scale = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
        entries.append({"name": f"{rtype.plural}/scale", **base, **scale,
                        "verbs": ["get", "patch", "update"]})
    return entries


def resource_list(
    registry: ResourceRegistry, group_name: str, version: str
) -> dict[str, Any] | None:
    types = [t for t in registry.all() if (t.group, t.version) == (group_name, version)]
    if not types:
        return None
    resources = []
    for rtype in sorted(types, key=lambda t: t.plural):
        resources.append(_resource(rtype))
        resources.extend(_subresources(rtype))
    group_version = f"{group_name}/{version}" if group_name else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }
