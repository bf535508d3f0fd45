"""Domain values of a cluster registry record (CLM's format) and the versions derived from them.

A record is parsed once into frozen dataclasses; adapters never hand SDK or raw objects upward.
"""

from __future__ import annotations

import base64
import hashlib
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, TypeVar

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

#: CLM's cap on the problems of a status; past it the oldest go and the first place says so.
MAX_PROBLEMS = 25
#: The problem type of CLM's placeholder past the cap (controller.go).
TOO_MANY_PROBLEMS = "https://cluster-lifecycle-manager.zalando.org/problems/too-many-problems"
#: The lifecycle values CLM's controller acts on; anything else it refuses to process.
CLM_LIFECYCLE = frozenset({REQUESTED, READY, DECOMMISSION_REQUESTED, DECOMMISSIONED})

#: Pools of this profile are Karpenter's (CLM's layout): no stack, `provisioners.yaml` applied to
#: the cluster, no instance types needed.
KARPENTER_PROFILE = "worker-karpenter"


def is_karpenter(profile: str) -> bool:
    """CLM's `NodePool.IsKarpenter`: the pool's profile is `worker-karpenter`."""
    return profile == KARPENTER_PROFILE


def is_master(profile: str, *, prefix: bool = False) -> bool:
    """CLM's `NodePool.IsMaster`: the pool's profile contains `master`; with `prefix`, starts
    with it, the rule CLM's template functions (`zoneDistributedNodePoolGroups`...) use."""
    return profile.startswith("master") if prefix else "master" in profile


@dataclass(frozen=True)
class NodePool:
    name: str
    profile: str
    instance_types: tuple[str, ...] = ()
    #: As written; "" when missing (CLM hashes and templates it so; a spot pool says "spot...").
    discount_strategy: str = "none"
    min_size: int = 0
    max_size: int = 0
    config_items: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Problem:
    """An RFC 7807 problem as CLM keeps it in a status: every field survives a write-back."""

    type: str
    title: str
    detail: str = ""
    status: int = 0
    instance: str = ""


@dataclass(frozen=True)
class Health:
    """A health verdict as the registry keeps it (`status.health`, clmgit's addition; CLM ignores
    it): the state of the cluster running `version` when observed at `observed_at`, since when it
    has been healthy without a break, and why it is not. See clmgit/healthstate.py."""

    state: str
    version: str
    observed_at: str
    healthy_since: str = ""
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClusterStatus:
    current_version: str = ""
    last_version: str = ""
    next_version: str = ""
    problems: tuple[Problem, ...] = ()
    #: When current_version was applied (ISO 8601, UTC); clmgit's addition, used by the soak gate.
    applied_at: str = ""
    #: The last health verdict (clmgit's addition, the `healthy_in_source` gate reads it).
    health: Health | None = None


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
    #: `provider` and `lifecycle_status` as the record writes them ("" when missing or null),
    #: None when the effective value above is also what is written. CLM hashes the written text;
    #: the defaults above only steer clmgit's own behaviour.
    written_provider: str | None = None
    written_lifecycle_status: str | None = None

    @property
    def applied_sha(self) -> str:
        return parse_version(self.status.current_version)[0]

    @cached_property
    def version_hash(self) -> str:
        """`cluster_hash` of the record, computed once: a record does not change, and a fleet's
        records are hashed by every status and reconcile (the parsed-registry cache keeps it)."""
        return cluster_hash(self)

    def field_value(self, key: str) -> str | None:
        """A registry field by selector key: `alias`, `region`, ... or `config_items.<key>`."""
        if key.startswith("config_items."):
            return self.config_items.get(key.removeprefix("config_items."))
        if key in SELECTOR_FIELDS:
            return str(getattr(self, key))
        return None


def is_selector_key(key: str) -> bool:
    """Whether a selector may name `key`: a field of SELECTOR_FIELDS or `config_items.<key>`."""
    return key in SELECTOR_FIELDS or key.startswith("config_items.")


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
    provider = cluster.provider if cluster.written_provider is None else cluster.written_provider
    lifecycle = (cluster.lifecycle_status if cluster.written_lifecycle_status is None
                 else cluster.written_lifecycle_status)
    # The strings between two integers are joined and encoded at once (UTF-8 of a join is the
    # join of the UTF-8s): a tenth of the calls of encoding each, for 10,000 records a run.
    parts = [
        "".join((cluster.id, cluster.infrastructure_account, cluster.local_id,
                 cluster.api_server_url, cluster.channel, cluster.environment)).encode(),
        _INT32_LE(cluster.criticality_level),
        "".join([lifecycle, provider, cluster.region, *_sorted_items(cluster.config_items)]
                ).encode(),
    ]
    for pool in cluster.node_pools:
        parts.append("".join([pool.name, pool.profile, *pool.instance_types,
                              pool.discount_strategy]).encode())
        parts.append(_TWO_INT64_LE(pool.min_size, pool.max_size))
        parts.append("".join(_sorted_items(pool.config_items)).encode())
    digest = hashlib.sha1(b"".join(parts)).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


_INT32_LE = struct.Struct("<i").pack
_TWO_INT64_LE = struct.Struct("<qq").pack


def _sorted_items(items: Mapping[str, str]) -> list[str]:
    return [text for key in sorted(items) for text in (key, items[key])]


def desired_version(sha: str, cluster: Cluster) -> str:
    return f"{sha}#{cluster.version_hash}"


# --- several config sources (CLM's `--config-source`) -------------------------------------------
#
# The config version is CLM's `ConfigVersion.ID()`: one source, its SHA; two or more,
# `name1=sha1;name2=sha2` in source order (channel/combined.go); the desired version appends
# `#<cluster hash>` as for one source. `override_channel` (`src1=rev1,src2=rev2`) points a source
# at another revision for one cluster; clmgit refuses what CLM would ignore.

#: CLM's config item that points a cluster's sources at other revisions.
OVERRIDE_ITEM = "override_channel"


def config_version(shas: Sequence[tuple[str, str]]) -> str:
    """CLM's config version of (source, sha) pairs in source order: one source, its SHA."""
    if len(shas) == 1:
        return shas[0][1]
    return ";".join(f"{name}={sha}" for name, sha in shas)


def short_version(version: str | None) -> str:
    """A SHA's first 7 characters; in a config version of several sources, each source's."""
    if not version:
        return "-"
    if "=" not in version:
        return version[:7]
    return ";".join(f"{n}={sha[:7]}" for n, _, sha in (p.partition("=")
                                                        for p in version.split(";")))


def split_config_version(version: str, names: Sequence[str]) -> dict[str, str]:
    """{source: sha} of a config version made by `config_version` for the sources `names`."""
    if len(names) == 1:
        return {names[0]: version}
    parts = dict(p.partition("=")[::2] for p in version.split(";"))
    if list(parts) != list(names) or not all(SHA_RE.match(s) for s in parts.values()):
        raise ConfigError(f"config version {version!r} does not name the sources "
                          f"{', '.join(names)} with a SHA each")
    return parts


def channel_overrides(cluster: Cluster, names: Sequence[str]) -> dict[str, str]:
    """`override_channel` of a cluster as {source: revision}, validated (CLM splits it on ','
    and '=' and ignores what it does not know; clmgit refuses it, naming the cluster)."""
    raw = cluster.config_items.get(OVERRIDE_ITEM)
    if raw is None:
        return {}
    who = f"cluster {cluster.alias or cluster.id}: config item {OVERRIDE_ITEM}"
    out: dict[str, str] = {}
    for part in raw.split(","):
        name, sep, rev = part.partition("=")
        if not sep:
            raise ConfigError(f"{who}: {part!r} is not source=revision")
        if name not in names:
            raise ConfigError(f"{who}: {name!r} is not a config source "
                              f"(sources: {', '.join(names)}; names are not trimmed)")
        if not rev.strip():
            raise ConfigError(f"{who}: source {name!r} has an empty revision")
        if name in out:
            raise ConfigError(f"{who}: source {name!r} is named twice")
        out[name] = rev
    return out


def with_lifecycle(cluster: Cluster, lifecycle_status: str) -> Cluster:
    """The record once `lifecycle_status` is written into it (then written and effective agree)."""
    if lifecycle_status == cluster.lifecycle_status and cluster.written_lifecycle_status is None:
        return cluster
    return replace(cluster, lifecycle_status=lifecycle_status, written_lifecycle_status=None)


# --- parsing raw records -------------------------------------------------------------------------
#
# Records are read the way CLM reads them: into string fields the text as written (a `Scalar`
# from the file registry's loader carries it; yaml.v2 keeps a scalar's source text for a string
# field), null or missing as "", no defaults; whole numbers into the integer fields; anything of
# another type is refused naming the record and the field, as CLM's decoders refuse it.

_SURROGATE = re.compile("[\ud800-\udfff]")
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


class Scalar(str):
    """A YAML scalar as written: the string is its text, `resolved` the value YAML 1.1 gives it
    (None for null). Only the registry's YAML loader makes these."""

    resolved: Any

    def __new__(cls, text: str, resolved: Any) -> Scalar:
        self = super().__new__(cls, text)
        self.resolved = resolved
        return self


def _type_name(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


def _string(value: Any, where: str, name: str) -> str:
    """A string field: the text as written; "" for null or missing. A lone UTF-16 surrogate
    (JSON `\\ud800`) becomes U+FFFD, as Go's JSON decoder makes it."""
    if type(value) is str:  # nearly always: registries of thousands of records come here
        if value.isascii():  # a flag of the string object: no scan
            return value
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if value is None:
        return ""
    if isinstance(value, Scalar):
        return "" if value.resolved is None else str.__str__(value)
    raise ConfigError(f"{where}: {name} must be a string, not {_type_name(value)}")


def _whole(value: Any, where: str, name: str, bounds: tuple[int, int] = _INT64) -> int:
    """An integer field. YAML: any scalar YAML reads as a number (yaml.v2 truncates a float);
    JSON: an integer. A string (`"3"`), a boolean or a collection is refused, as CLM does."""
    if isinstance(value, Scalar):
        value = value.resolved
        if isinstance(value, float) and value == value and abs(value) != float("inf"):
            value = int(value)
    if value is None:
        return 0
    if type(value) is not int:
        shown = f"{value!r}" if isinstance(value, (str, float)) else _type_name(value)
        raise ConfigError(f"{where}: {name} must be a whole number, not {shown}")
    if not bounds[0] <= value <= bounds[1]:
        raise ConfigError(f"{where}: {name} {value} is out of range")
    return value


def _list(value: Any, where: str, name: str) -> list[Any]:
    if value is None or (isinstance(value, Scalar) and value.resolved is None):
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{where}: {name} must be a list, not {_type_name(value)}")
    return value


def _mapping(value: Any, where: str, name: str) -> Mapping[Any, Any]:
    if value is None or (isinstance(value, Scalar) and value.resolved is None):
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: {name} must be a mapping, not {_type_name(value)}")
    return value


def _items(raw: Any, where: str, name: str = "config_items") -> dict[str, str]:
    items = _mapping(raw, where, name)
    out: dict[str, str] = {}
    for k, v in items.items():
        # Plain ASCII text, as nearly every item is, is taken as it is; anything else goes
        # through `_string` (its field name is only spelt out then: thousands of records
        # have tens of thousands of items).
        if type(k) is str and type(v) is str and k.isascii() and v.isascii():
            out[k] = v
        else:
            out[_string(k, where, f"a key of {name}")] = _string(v, where, f"{name}.{k}")
    return out


def parse_node_pool(raw: Any, where: str) -> NodePool:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: a node pool must be a mapping, not {_type_name(raw)}")
    name = _string(raw.get("name"), where, "node pool name")
    if not name:
        raise ConfigError(f"{where}: every node pool needs a name")
    where = f"{where}, node pool {name}"
    return NodePool(
        name=name,
        profile=_string(raw.get("profile"), where, "profile"),
        instance_types=tuple(_string(t, where, "instance_types[]")
                             for t in _list(raw.get("instance_types"), where, "instance_types")),
        discount_strategy=_string(raw.get("discount_strategy"), where, "discount_strategy"),
        min_size=_whole(raw.get("min_size"), where, "min_size"),
        max_size=_whole(raw.get("max_size"), where, "max_size"),
        config_items=_items(raw.get("config_items"), where),
    )


def parse_problem(raw: Any, where: str) -> Problem:
    problem = _mapping(raw, where, "a problem")
    return Problem(
        type=_string(problem.get("type"), where, "problem type"),
        title=_string(problem.get("title"), where, "problem title"),
        detail=_string(problem.get("detail"), where, "problem detail"),
        status=_whole(problem.get("status"), where, "problem status", _INT32),
        instance=_string(problem.get("instance"), where, "problem instance"),
    )


def parse_status(raw: Any, where: str = "status") -> ClusterStatus:
    status = _mapping(raw, where, "status")
    where = f"{where}, status"
    return ClusterStatus(
        current_version=_string(status.get("current_version"), where, "current_version"),
        last_version=_string(status.get("last_version"), where, "last_version"),
        next_version=_string(status.get("next_version"), where, "next_version"),
        problems=tuple(parse_problem(p, where)
                       for p in _list(status.get("problems"), where, "problems")),
        applied_at=_string(status.get("applied_at"), where, "applied_at"),
        health=parse_health(status.get("health"), where),
    )


def parse_health(raw: Any, where: str) -> Health | None:
    """`status.health`; None when missing or null."""
    health = _mapping(raw, where, "health")
    if not health:
        return None
    where = f"{where}, health"
    return Health(
        state=_string(health.get("state"), where, "state"),
        version=_string(health.get("version"), where, "version"),
        observed_at=_string(health.get("observed_at"), where, "observed_at"),
        healthy_since=_string(health.get("healthy_since"), where, "healthy_since"),
        reasons=tuple(_string(r, where, "reasons[]")
                      for r in _list(health.get("reasons"), where, "reasons")),
    )


def parse_cluster(raw: Any, where: str) -> Cluster:
    """One registry record; `where` names it in errors (file and position)."""
    try:
        return _plain_cluster(raw)
    except _Irregular:
        pass  # the general reading below takes it, or names what is wrong with it
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: a cluster must be a mapping, not {_type_name(raw)}")
    cid = _string(raw.get("id"), where, "id")
    if not cid:
        raise ConfigError(f"{where}: every cluster needs an id")
    where = f"{where} ({cid})"
    provider = _string(raw.get("provider"), where, "provider")
    lifecycle = _string(raw.get("lifecycle_status"), where, "lifecycle_status")
    return Cluster(
        id=cid,
        alias=_string(raw.get("alias"), where, "alias"),
        infrastructure_account=_string(
            raw.get("infrastructure_account"), where, "infrastructure_account"),
        region=_string(raw.get("region"), where, "region"),
        local_id=_string(raw.get("local_id"), where, "local_id"),
        provider=provider or "zalando-aws",
        api_server_url=_string(raw.get("api_server_url"), where, "api_server_url"),
        channel=_string(raw.get("channel"), where, "channel"),
        environment=_string(raw.get("environment"), where, "environment"),
        criticality_level=_whole(raw.get("criticality_level"), where, "criticality_level",
                                 _INT32),
        lifecycle_status=lifecycle or READY,
        owner=_string(raw.get("owner"), where, "owner"),
        config_items=_items(raw.get("config_items"), where),
        node_pools=tuple(parse_node_pool(p, where)
                         for p in _list(raw.get("node_pools"), where, "node_pools")),
        status=parse_status(raw.get("status"), where),
        written_provider=None if provider else "",
        written_lifecycle_status=None if lifecycle else "",
    )


# --- the same reading, for plain records ---------------------------------------------------------
#
# Registries of thousands of records arrive as JSON (the HTTP registry) or YAML (the file registry,
# whose loader gives strings as `str`, numbers as `Scalar`s) where nearly every record is plain:
# dicts and lists, ASCII strings, integers in range (or `Scalar`s of one), null. For such a record
# the general reading above comes to exactly the values below; anything else (another Scalar,
# another type, non-ASCII text, a missing id or pool name) raises `_Irregular` and is read by the
# general path, which also words every error.


_T = TypeVar("_T")


class _Irregular(Exception):
    """A record the plain reading leaves to the general one."""


def _frozen(cls: type[_T], fields: dict[str, Any]) -> _T:
    """An instance of the frozen dataclass `cls` from every one of its fields, set as they are:
    its `__init__` sets each through `object.__setattr__`, which was a third of the plain
    reading. Only for values the plain reading has checked (the property test in
    tests/registry_clm/test_plain_reading.py compares the result with the general reading's)."""
    made = object.__new__(cls)
    made.__dict__.update(fields)
    return made


def _plain_text(value: Any) -> str:
    if type(value) is str and value.isascii():
        return value
    if value is None:
        return ""
    raise _Irregular


def _plain_whole(value: Any, bounds: tuple[int, int] = _INT64) -> int:
    if value is None:
        return 0
    if type(value) is Scalar:  # a number in a YAML registry: its value
        value = value.resolved
    if type(value) is int and bounds[0] <= value <= bounds[1]:
        return value
    raise _Irregular


def _plain_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if type(value) is list:
        return value
    raise _Irregular


def _plain_dict(value: Any) -> dict[Any, Any]:
    if value is None:
        return {}
    if type(value) is dict:
        return value
    raise _Irregular


def _plain_items(value: Any) -> dict[str, str]:
    items = _plain_dict(value)
    for k, v in items.items():
        if type(k) is not str or type(v) is not str or not k.isascii() or not v.isascii():
            raise _Irregular
    return dict(items)


def _plain_pool(raw: Any) -> NodePool:
    if type(raw) is not dict:
        raise _Irregular
    get = raw.get
    name = _plain_text(get("name"))
    if not name:
        raise _Irregular
    return _frozen(NodePool, {
        "name": name,
        "profile": _plain_text(get("profile")),
        "instance_types": tuple(map(_plain_text, _plain_list(get("instance_types")))),
        "discount_strategy": _plain_text(get("discount_strategy")),
        "min_size": _plain_whole(get("min_size")),
        "max_size": _plain_whole(get("max_size")),
        "config_items": _plain_items(get("config_items")),
    })


def _plain_problem(raw: Any) -> Problem:
    get = _plain_dict(raw).get
    return Problem(
        type=_plain_text(get("type")),
        title=_plain_text(get("title")),
        detail=_plain_text(get("detail")),
        status=_plain_whole(get("status"), _INT32),
        instance=_plain_text(get("instance")),
    )


def _plain_status(raw: Any) -> ClusterStatus:
    get = _plain_dict(raw).get
    return ClusterStatus(
        current_version=_plain_text(get("current_version")),
        last_version=_plain_text(get("last_version")),
        next_version=_plain_text(get("next_version")),
        problems=tuple(map(_plain_problem, _plain_list(get("problems")))),
        applied_at=_plain_text(get("applied_at")),
        health=_plain_health(get("health")),
    )


def _plain_health(raw: Any) -> Health | None:
    get = _plain_dict(raw).get
    if not raw:
        return None
    return Health(
        state=_plain_text(get("state")),
        version=_plain_text(get("version")),
        observed_at=_plain_text(get("observed_at")),
        healthy_since=_plain_text(get("healthy_since")),
        reasons=tuple(map(_plain_text, _plain_list(get("reasons")))),
    )


def _plain_cluster(raw: Any) -> Cluster:
    if type(raw) is not dict:
        raise _Irregular
    get = raw.get
    cid = _plain_text(get("id"))
    if not cid:
        raise _Irregular
    provider = _plain_text(get("provider"))
    lifecycle = _plain_text(get("lifecycle_status"))
    return _frozen(Cluster, {
        "id": cid,
        "alias": _plain_text(get("alias")),
        "infrastructure_account": _plain_text(get("infrastructure_account")),
        "region": _plain_text(get("region")),
        "local_id": _plain_text(get("local_id")),
        "provider": provider or "zalando-aws",
        "api_server_url": _plain_text(get("api_server_url")),
        "channel": _plain_text(get("channel")),
        "environment": _plain_text(get("environment")),
        "criticality_level": _plain_whole(get("criticality_level"), _INT32),
        "lifecycle_status": lifecycle or READY,
        "owner": _plain_text(get("owner")),
        "config_items": _plain_items(get("config_items")),
        "node_pools": tuple(map(_plain_pool, _plain_list(get("node_pools")))),
        "status": _plain_status(get("status")),
        "written_provider": None if provider else "",
        "written_lifecycle_status": None if lifecycle else "",
    })


def status_to_dict(status: ClusterStatus) -> dict[str, Any]:
    """The wire/file form of a status, as CLM writes it."""
    out: dict[str, Any] = {
        "current_version": status.current_version,
        "last_version": status.last_version,
        "next_version": status.next_version,
        "problems": [_problem_dict(p) for p in status.problems],
    }
    if status.applied_at:
        out["applied_at"] = status.applied_at
    if status.health is not None:
        out["health"] = health_to_dict(status.health)
    return out


def health_to_dict(health: Health) -> dict[str, Any]:
    return {"state": health.state, "version": health.version,
            "observed_at": health.observed_at, "healthy_since": health.healthy_since,
            "reasons": list(health.reasons)}


def _problem_dict(problem: Problem) -> dict[str, Any]:
    """A problem's wire form; `status` and `instance` only when set (CLM's registry models
    leave them out when empty, and so a registry that knows only the first three fields takes
    the problems clmgit writes)."""
    out: dict[str, Any] = {"type": problem.type, "title": problem.title,
                           "detail": problem.detail}
    if problem.status:
        out["status"] = problem.status
    if problem.instance:
        out["instance"] = problem.instance
    return out


def cluster_to_dict(cluster: Cluster) -> dict[str, Any]:
    return {
        "id": cluster.id,
        "alias": cluster.alias,
        "infrastructure_account": cluster.infrastructure_account,
        "region": cluster.region,
        "local_id": cluster.local_id,
        "provider": (cluster.provider if cluster.written_provider is None
                     else cluster.written_provider),
        "api_server_url": cluster.api_server_url,
        "channel": cluster.channel,
        "environment": cluster.environment,
        "criticality_level": cluster.criticality_level,
        "lifecycle_status": (cluster.lifecycle_status if cluster.written_lifecycle_status is None
                             else cluster.written_lifecycle_status),
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
