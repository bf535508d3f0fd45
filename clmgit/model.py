"""Domain values of a cluster registry record (CLM's format) and the versions derived from them.

A record is parsed once into frozen dataclasses; adapters never hand SDK or raw objects upward.
"""

from __future__ import annotations

import base64
import hashlib
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clmgit.errors import ConfigError

#: Lifecycle states of a cluster (CLM's Cluster Registry).
REQUESTED = "requested"
CREATING = "creating"
READY = "ready"
DECOMMISSION_REQUESTED = "decommission-requested"
DECOMMISSIONED = "decommissioned"

#: A config item that stops reconcile from touching the cluster (any value; CLM's name).
UPDATE_BLOCK = "cluster_update_block"

#: A full commit id, as pins and versions hold it.
SHA_RE = re.compile(r"^[0-9a-f]{40}$")

MAX_PROBLEMS = 25


@dataclass(frozen=True)
class NodePool:
    name: str
    profile: str
    instance_types: tuple[str, ...] = ()
    discount_strategy: str = "none"
    min_size: int = 0
    max_size: int = 0
    config_items: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Problem:
    type: str
    title: str
    detail: str = ""


@dataclass(frozen=True)
class ClusterStatus:
    current_version: str = ""
    last_version: str = ""
    next_version: str = ""
    problems: tuple[Problem, ...] = ()
    #: When current_version was applied (ISO 8601, UTC); clmgit's addition, used by the soak gate.
    applied_at: str = ""


@dataclass(frozen=True)
class Cluster:
    id: str
    alias: str = ""
    infrastructure_account: str = ""
    region: str = ""
    local_id: str = ""
    provider: str = "zalando-aws"
    api_server_url: str = ""
    channel: str = ""
    environment: str = ""
    criticality_level: int = 0
    lifecycle_status: str = READY
    owner: str = ""
    config_items: Mapping[str, str] = field(default_factory=dict)
    node_pools: tuple[NodePool, ...] = ()
    status: ClusterStatus = ClusterStatus()

    @property
    def applied_sha(self) -> str:
        return parse_version(self.status.current_version)[0]

    def field_value(self, key: str) -> str | None:
        """A registry field by selector key: `alias`, `region`, ... or `config_items.<key>`."""
        if key.startswith("config_items."):
            return self.config_items.get(key.removeprefix("config_items."))
        if key in SELECTOR_FIELDS:
            return str(getattr(self, key))
        return None


SELECTOR_FIELDS = frozenset(
    {
        "id",
        "alias",
        "environment",
        "region",
        "provider",
        "criticality_level",
        "infrastructure_account",
        "channel",
        "lifecycle_status",
        "local_id",
    }
)


def parse_version(version: str) -> tuple[str, str]:
    """Split `<sha>#<cluster-hash>` into its parts; anything else gives empty parts, as CLM does."""
    sha, sep, cluster_hash = version.partition("#")
    if not sep or "#" in cluster_hash:
        return "", ""
    return sha, cluster_hash


def cluster_hash(cluster: Cluster) -> str:
    """A stable digest of a record, computed exactly as CLM's `Cluster.Version` does.

    SHA-1 over the string fields concatenated, integers little-endian (criticality as int32,
    node-pool sizes as int64), config items sorted by key; base64 URL encoding without padding.
    """
    state = bytearray()
    for text in (
        cluster.id,
        cluster.infrastructure_account,
        cluster.local_id,
        cluster.api_server_url,
        cluster.channel,
        cluster.environment,
    ):
        state += text.encode()
    state += struct.pack("<i", cluster.criticality_level)
    for text in (cluster.lifecycle_status, cluster.provider, cluster.region):
        state += text.encode()
    _add_items(state, cluster.config_items)
    for pool in cluster.node_pools:
        state += pool.name.encode() + pool.profile.encode()
        for instance_type in pool.instance_types:
            state += instance_type.encode()
        state += pool.discount_strategy.encode()
        state += struct.pack("<qq", pool.min_size, pool.max_size)
        _add_items(state, pool.config_items)
    digest = hashlib.sha1(state).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _add_items(state: bytearray, items: Mapping[str, str]) -> None:
    for key in sorted(items):
        state += key.encode() + items[key].encode()


def desired_version(sha: str, cluster: Cluster) -> str:
    return f"{sha}#{cluster_hash(cluster)}"


# --- parsing raw records -------------------------------------------------------------------------


def _text(value: Any) -> str:
    """CLM's config items are strings; YAML may hand us booleans or numbers for them."""
    if type(value) is str:  # nearly always: registries of thousands of records come here
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _items(raw: Any, where: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: config_items must be a mapping of strings")
    return {k if type(k) is str else str(k): v if type(v) is str else _text(v)
            for k, v in raw.items()}


def _int(raw: Any, where: str, name: str) -> int:
    if raw is None or raw == "":
        return 0
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: {name} must be a whole number, not {raw!r}") from None


def parse_node_pool(raw: Any, where: str) -> NodePool:
    if not isinstance(raw, Mapping) or not raw.get("name"):
        raise ConfigError(f"{where}: every node pool needs a name")
    where = f"{where}, node pool {raw['name']}"
    types = raw.get("instance_types") or []
    if isinstance(types, str):
        types = [types]
    return NodePool(
        name=str(raw["name"]),
        profile=_text(raw.get("profile")),
        instance_types=tuple(str(t) for t in types),
        discount_strategy=_text(raw.get("discount_strategy") or "none"),
        min_size=_int(raw.get("min_size"), where, "min_size"),
        max_size=_int(raw.get("max_size"), where, "max_size"),
        config_items=_items(raw.get("config_items"), where),
    )


def parse_status(raw: Any) -> ClusterStatus:
    if not isinstance(raw, Mapping):
        return ClusterStatus()
    problems = tuple(
        Problem(
            type=_text(p.get("type")), title=_text(p.get("title")), detail=_text(p.get("detail"))
        )
        for p in raw.get("problems") or ()
        if isinstance(p, Mapping)
    )
    return ClusterStatus(
        current_version=_text(raw.get("current_version")),
        last_version=_text(raw.get("last_version")),
        next_version=_text(raw.get("next_version")),
        problems=problems,
        applied_at=_text(raw.get("applied_at")),
    )


def parse_cluster(raw: Any, where: str) -> Cluster:
    """One registry record; `where` names it in errors (file and position)."""
    if not isinstance(raw, Mapping) or not raw.get("id"):
        raise ConfigError(f"{where}: every cluster needs an id")
    where = f"{where} ({raw['id']})"
    return Cluster(
        id=str(raw["id"]),
        alias=_text(raw.get("alias")),
        infrastructure_account=_text(raw.get("infrastructure_account")),
        region=_text(raw.get("region")),
        local_id=_text(raw.get("local_id")),
        provider=_text(raw.get("provider") or "zalando-aws"),
        api_server_url=_text(raw.get("api_server_url")),
        channel=_text(raw.get("channel")),
        environment=_text(raw.get("environment")),
        criticality_level=_int(raw.get("criticality_level"), where, "criticality_level"),
        lifecycle_status=_text(raw.get("lifecycle_status") or READY),
        owner=_text(raw.get("owner")),
        config_items=_items(raw.get("config_items"), where),
        node_pools=tuple(parse_node_pool(p, where) for p in raw.get("node_pools") or ()),
        status=parse_status(raw.get("status")),
    )


def status_to_dict(status: ClusterStatus) -> dict[str, Any]:
    """The wire/file form of a status, as CLM writes it."""
    out: dict[str, Any] = {
        "current_version": status.current_version,
        "last_version": status.last_version,
        "next_version": status.next_version,
        "problems": [
            {"type": p.type, "title": p.title, "detail": p.detail} for p in status.problems
        ],
    }
    if status.applied_at:
        out["applied_at"] = status.applied_at
    return out


def cluster_to_dict(cluster: Cluster) -> dict[str, Any]:
    return {
        "id": cluster.id,
        "alias": cluster.alias,
        "infrastructure_account": cluster.infrastructure_account,
        "region": cluster.region,
        "local_id": cluster.local_id,
        "provider": cluster.provider,
        "api_server_url": cluster.api_server_url,
        "channel": cluster.channel,
        "environment": cluster.environment,
        "criticality_level": cluster.criticality_level,
        "lifecycle_status": cluster.lifecycle_status,
        "owner": cluster.owner,
        "config_items": dict(cluster.config_items),
        "node_pools": [
            {
                "name": p.name,
                "profile": p.profile,
                "instance_types": list(p.instance_types),
                "discount_strategy": p.discount_strategy,
                "min_size": p.min_size,
                "max_size": p.max_size,
                "config_items": dict(p.config_items),
            }
            for p in cluster.node_pools
        ],
        "status": status_to_dict(cluster.status),
    }
