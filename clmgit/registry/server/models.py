"""The registry server's contract as pydantic models: CLM's Cluster Registry API
(docs/cluster-registry.yaml of cluster-lifecycle-manager, the spec CLM generates its client from)
with its types, patterns, int32 bounds and required fields, plus clmgit's additions (leases,
`owner`, `status.applied_at`, `status.health`). The served OpenAPI document is generated from
these models.

Where clmgit is stricter than CLM's spec, it is so on purpose: unknown fields are refused (a
typo must not be dropped silently), a cluster id must match the path pattern (else the record
could never be read back), sizes are not negative, every string is free of NUL and lone
surrogates (see `limits`), and a cluster's lifecycle is never `creating` (see ClusterLifecycle).
What a schema cannot say (CLM's acceptance rules, clashes between records) `validate` checks
with the client's own code.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    model_validator,
)

from clmgit.registry.server.limits import INT32_MAX, INT32_MIN, MAX_LEASE_TTL_SECONDS, bad_text

#: Path patterns, as CLM's spec writes them.
CLUSTER_ID = "^[a-z][a-z0-9-:]*[a-z0-9]$"
ACCOUNT_ID = CLUSTER_ID
POOL_NAME = "^[a-z][a-z0-9-]*[a-z0-9]$"
CONFIG_KEY = "^[a-z][a-z0-9_]*[a-z0-9]$"
ALIAS = POOL_NAME
#: The default of an optional field, query parameter or header: None, typed `Any` so that the
#: declaration keeps its type. Such a value may be left out but is never null, and the schema
#: must say "a string", as CLM's spec does; `X | None` would say "a string or null". Code that
#: reads one tests it for None (or reads only the fields set: `exclude_unset`).
ABSENT: Any = None


def _safe(text: str) -> str:
    reason = bad_text(text)
    if reason is not None:
        raise ValueError(f"contains {reason}")
    return text


def _unique(items: list[str]) -> list[str]:
    if len(set(items)) != len(items):
        raise ValueError("lists an instance type twice")
    return items


SafeStr = Annotated[StrictStr, AfterValidator(_safe)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=253), AfterValidator(_safe)]
Holder = Annotated[StrictStr, Field(min_length=1, max_length=200), AfterValidator(_safe)]
Int32 = Annotated[
    StrictInt, Field(ge=INT32_MIN, le=INT32_MAX, json_schema_extra={"format": "int32"})
]
Size = Annotated[StrictInt, Field(ge=0, le=INT32_MAX)]
Items = dict[SafeStr, SafeStr]
#: The lifecycle values CLM's controller acts on (`model.CLM_LIFECYCLE`). CLM's spec also lists
#: `creating`, which its controller refuses as an invalid cluster status; clmgit keeps
#: `requested` until a cluster is created, so the server refuses `creating` too.
ClusterLifecycle = Literal["requested", "ready", "decommission-requested", "decommissioned"]
#: A list filter may still ask for every value of CLM's spec (it finds no `creating` record).
ClusterLifecycleFilter = Literal[
    "requested", "creating", "ready", "decommission-requested", "decommissioned"
]
AccountLifecycle = Literal["requested", "creating", "ready", "decommissioned"]
#: CLM derives the cluster's hosted zone from this URL's host; a schema cannot say that the
#: rule depends on the provider, so `validate` checks it (400) and the document says it.
ApiServerUrl = Annotated[SafeStr, Field(description=(
    "The API server's URL. Unless the provider is zalando-eks its host must have a dot "
    "(CLM derives the hosted zone from it); a record without one is refused with 400."))]
InstanceTypes = Annotated[
    list[Name],
    Field(min_length=1, json_schema_extra={"uniqueItems": True}),
    AfterValidator(_unique),
]


class Strict(BaseModel):
    """Unknown fields are refused; optional fields may be left out but are never null."""

    model_config = ConfigDict(extra="forbid")


class StatusProblem(BaseModel):
    """One problem of a cluster's status, as CLM writes it (extra members are strings)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, SafeStr] = Field(init=False)

    type: SafeStr
    title: SafeStr
    status: Int32 = ABSENT
    detail: SafeStr = ABSENT
    instance: SafeStr = ABSENT


class HealthVerdict(Strict):
    """clmgit's addition: the last health verdict of a cluster (clmgit/healthstate.py)."""

    state: Literal["healthy", "unhealthy", "unknown", "pending", "failed"]
    version: SafeStr
    observed_at: SafeStr
    healthy_since: SafeStr = ABSENT
    reasons: list[SafeStr] = ABSENT


class ClusterStatus(Strict):
    current_version: SafeStr = ABSENT
    last_version: SafeStr = ABSENT
    next_version: SafeStr = ABSENT
    problems: list[StatusProblem] = ABSENT
    #: clmgit's addition: when current_version was applied (the soak gate reads it).
    applied_at: SafeStr = ABSENT
    #: clmgit's addition: the last health verdict (the healthy_in_source gate reads it).
    health: HealthVerdict = ABSENT


class _PoolSizes(Strict):
    @model_validator(mode="after")
    def _sizes(self) -> Any:
        low, high = getattr(self, "min_size", None), getattr(self, "max_size", None)
        if low is not None and high is not None and high < low:
            raise ValueError("max_size must not be below min_size")
        return self


class NodePool(_PoolSizes):
    name: Name
    profile: SafeStr
    instance_types: InstanceTypes
    discount_strategy: SafeStr
    min_size: Size
    max_size: Size
    config_items: Items = ABSENT


class NodePoolUpdate(_PoolSizes):
    name: Name = ABSENT
    profile: SafeStr = ABSENT
    instance_types: InstanceTypes = ABSENT
    discount_strategy: SafeStr = ABSENT
    min_size: Size = ABSENT
    max_size: Size = ABSENT
    config_items: Items = ABSENT


def _unique_pools(pools: list[NodePool]) -> list[NodePool]:
    names = [p.name for p in pools]
    if len(set(names)) != len(names):
        raise ValueError("lists a node pool twice")
    return pools


NodePools = Annotated[list[NodePool], AfterValidator(_unique_pools)]


class Cluster(Strict):
    """A cluster as created (`POST /kubernetes-clusters`)."""

    id: Annotated[StrictStr, Field(pattern=CLUSTER_ID, max_length=253)]
    alias: Annotated[StrictStr, Field(pattern=ALIAS, max_length=253)]
    infrastructure_account: SafeStr
    region: SafeStr
    local_id: SafeStr
    provider: SafeStr
    api_server_url: ApiServerUrl
    channel: SafeStr
    environment: SafeStr
    criticality_level: Int32
    lifecycle_status: ClusterLifecycle
    status: ClusterStatus = ABSENT
    config_items: Items = ABSENT
    node_pools: NodePools = ABSENT
    created_at: datetime = ABSENT
    #: clmgit's addition: the team owning the cluster.
    owner: SafeStr = ABSENT


class LeaseRequest(Strict):
    """clmgit's addition: take or renew a cluster's lease (see api.py)."""

    holder: Holder
    ttl_seconds: Annotated[
        StrictInt | StrictFloat, Field(ge=0, le=MAX_LEASE_TTL_SECONDS, allow_inf_nan=False)
    ]
    take_over: Holder = ABSENT


class ClusterUpdate(Strict):
    """A change to a cluster (`PATCH /kubernetes-clusters/{id}`): the fields it has replace the
    stored ones. `id`, if given, must be the path's."""

    id: SafeStr = ABSENT
    #: CLM's spec has no pattern here, but one on Cluster.alias: kept, so what is stored
    #: always reads back as a valid Cluster.
    alias: Annotated[StrictStr, Field(pattern=ALIAS, max_length=253)] = ABSENT
    infrastructure_account: SafeStr = ABSENT
    region: SafeStr = ABSENT
    local_id: SafeStr = ABSENT
    provider: SafeStr = ABSENT
    api_server_url: ApiServerUrl = ABSENT
    channel: SafeStr = ABSENT
    environment: SafeStr = ABSENT
    criticality_level: Int32 = ABSENT
    lifecycle_status: ClusterLifecycle = ABSENT
    status: ClusterStatus = ABSENT
    config_items: Items = ABSENT
    #: clmgit's additions: replace every node pool; the owner; the lease (null gives it up).
    node_pools: NodePools = ABSENT
    owner: SafeStr = ABSENT
    lease: LeaseRequest | None = None


class Lease(BaseModel):
    holder: str
    expires_at: datetime


class ClusterOut(BaseModel):
    """A cluster as answered: every field of CLM's, with clmgit's lease."""

    id: str
    alias: Annotated[str, Field(pattern=ALIAS)]
    infrastructure_account: str
    region: str
    local_id: str
    provider: str
    api_server_url: str
    channel: str
    environment: str
    criticality_level: Int32
    lifecycle_status: ClusterLifecycle
    owner: str
    status: ClusterStatus
    config_items: Items = ABSENT
    node_pools: list[NodePool] = ABSENT
    created_at: datetime = ABSENT
    lease: Lease | None


class ClusterList(BaseModel):
    items: list[ClusterOut]


class NodePoolList(BaseModel):
    items: list[NodePool]


class ConfigValue(Strict):
    value: SafeStr


class InfrastructureAccount(Strict):
    id: Annotated[StrictStr, Field(pattern=ACCOUNT_ID, max_length=253)]
    type: SafeStr
    name: SafeStr
    owner: SafeStr
    cost_center: SafeStr
    environment: SafeStr
    criticality_level: Int32
    external_id: SafeStr
    lifecycle_status: AccountLifecycle


class InfrastructureAccountUpdate(Strict):
    id: SafeStr = ABSENT
    type: SafeStr = ABSENT
    name: SafeStr = ABSENT
    owner: SafeStr = ABSENT
    cost_center: SafeStr = ABSENT
    environment: SafeStr = ABSENT
    criticality_level: Int32 = ABSENT
    external_id: SafeStr = ABSENT
    lifecycle_status: AccountLifecycle = ABSENT


class InfrastructureAccountList(BaseModel):
    items: list[InfrastructureAccount]


class Error(BaseModel):
    """Every error answer (application/problem+json): RFC 9457's members and upstream's `Error`
    (code, message, fields), so CLM's generated client reads it too."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int
    detail: str
    code: Int32
    message: str
    fields: str = ABSENT
