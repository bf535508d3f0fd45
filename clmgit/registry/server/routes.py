"""The registry server's operations: one module-level handler per operation of CLM's Cluster
Registry API, on `router`, each calling `RegistryAPI`. The application (`app.create_app`) puts
what they serve in `app.state.registry` (a `Served`); each handler receives it through
`Depends`, which adds nothing to the OpenAPI document."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Annotated, Any

import yaml
from fastapi import APIRouter, Body, Depends, Header, Path, Query
from fastapi import Request as FastAPIRequest
from fastapi.routing import APIRoute
from pydantic import BaseModel, BeforeValidator
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response as HTTPResponse

from clmgit.registry.server import limits, models, validate
from clmgit.registry.server.api import Conditions, RegistryAPI
from clmgit.registry.server.db import SQLiteDatabase
from clmgit.registry.server.models import ABSENT
from clmgit.registry.server.problems import LEASE_HEADER, Problem, bad_request


class SafeRequest(FastAPIRequest):
    """A request whose JSON body is decoded within the limits (depth, NUL, surrogates, ints)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = limits.parse_json(await self.body())
        return self._json


class SafeRoute(APIRoute):
    def get_route_handler(self) -> Callable[[FastAPIRequest], Coroutine[Any, Any, HTTPResponse]]:
        handler = super().get_route_handler()
        known = {param.alias for param in self.dependant.query_params}

        async def safe(request: FastAPIRequest) -> HTTPResponse:
            # A misspelt filter must not silently select everything.
            unknown = sorted(set(request.query_params) - known)
            if unknown:
                raise bad_request(f"unknown query parameters: {', '.join(unknown)}")
            return await handler(SafeRequest(request.scope, request.receive))

        return safe


@dataclass
class Served:
    """What the handlers serve: the API over its database, and the slots for lists."""

    api: RegistryAPI
    lists: asyncio.Semaphore = field(
        default_factory=lambda: asyncio.Semaphore(limits.MAX_CONCURRENT_LISTS))

    @property
    def in_loop(self) -> bool:
        """SQLite is answered on the event loop: its writes are serialised anyway, and each
        hand-over to a worker thread and back costs a scheduling delay (tens of milliseconds
        on a loaded machine). PostgreSQL calls, which wait on the network, run on the thread
        pool so that requests overlap."""
        return isinstance(self.api.db, SQLiteDatabase)

    async def run(self, call: Callable[[], HTTPResponse]) -> HTTPResponse:
        return call() if self.in_loop else await run_in_threadpool(call)

    async def run_list(self, call: Callable[[], HTTPResponse]) -> HTTPResponse:
        """At most `limits.MAX_CONCURRENT_LISTS` lists built at once: each holds every matching
        record (and then its JSON body) in memory, so many clients listing a large registry at
        once would otherwise take as much memory as they like. The others wait their turn on
        the event loop (not on a worker thread, which other requests need), and after
        `limits.LIST_WAIT_SECONDS` are answered 503 with Retry-After. (SQLite answers one
        at a time anyway.)"""
        if self.in_loop:
            return call()
        try:
            await asyncio.wait_for(self.lists.acquire(), timeout=limits.LIST_WAIT_SECONDS)
        except TimeoutError:
            raise Problem(503, "Service Unavailable", "too many lists are being built at "
                          "once; try again shortly",
                          headers={"Retry-After": str(limits.RETRY_AFTER_SECONDS)}) from None
        try:
            return await run_in_threadpool(call)
        finally:
            self.lists.release()


def served(request: FastAPIRequest) -> Served:
    """The application's `Served` (`app.state.registry`)."""
    found = request.app.state.registry
    assert isinstance(found, Served)
    return found


def _set(model: BaseModel) -> dict[str, Any]:
    return dict(model.model_dump(mode="python", exclude_unset=True))


# --- parameters ---------------------------------------------------------------------------------

Registry = Annotated[Served, Depends(served)]
ClusterId = Annotated[str, Path(pattern=models.CLUSTER_ID, max_length=253)]
AccountId = Annotated[str, Path(pattern=models.ACCOUNT_ID, max_length=253)]
PoolName = Annotated[str, Path(pattern=models.POOL_NAME, max_length=253)]
ConfigKey = Annotated[str, Path(pattern=models.CONFIG_KEY, max_length=253)]
#: Optional query parameters and headers are declared without `| None` and with the default
#: `ABSENT` (None, which the document leaves out), so the schema says "a string", as CLM's does,
#: not "a string or null"; the handlers test them for None.
Filter = Annotated[models.SafeStr, Query()]
IfMatch = Annotated[str, Header(alias="If-Match")]
Holder = Annotated[str, Header(alias=LEASE_HEADER)]
Verbose = Annotated[bool, Query()]


def _conditions(if_match: IfMatch = ABSENT, holder: Holder = ABSENT) -> Conditions:
    """What a write is conditional on, from its `If-Match` and lease holder headers."""
    return Conditions(if_match, holder)


Conditional = Annotated[Conditions, Depends(_conditions)]


#: Query strings are text; an int32 there is parsed (bodies, unlike queries, are strict).
def _decimal(value: object) -> object:
    """An integer in a query as CLM's server reads one (Go's strconv.ParseInt, base 10): an
    optional sign and ASCII digits, nothing else. pydantic alone takes `\f9`, ` 9`, `9_0` and
    `9.0` as 9, 90 and 9 (found by the fuzz test)."""
    if isinstance(value, str) and not re.fullmatch(r"[+-]?[0-9]+", value):
        raise ValueError("an integer: digits with an optional sign")
    return value


Level = Annotated[
    int,
    BeforeValidator(_decimal),
    Query(ge=limits.INT32_MIN, le=limits.INT32_MAX, json_schema_extra={"format": "int32"}),
]

CLUSTERS = "/kubernetes-clusters"
CLUSTER = CLUSTERS + "/{cluster_id}"
ITEM = CLUSTER + "/config-items/{config_key}"
POOLS = CLUSTER + "/node-pools"
POOL = POOLS + "/{node_pool_name}"
POOL_ITEM = POOL + "/config-items/{config_key}"
ACCOUNTS = "/infrastructure-accounts"
ACCOUNT = ACCOUNTS + "/{account_id}"

#: A body is read as JSON whatever its Content-Type says (CLM's client and curl users send
#: none or another); the application's own router would say so, this one must too.
router = APIRouter(route_class=SafeRoute, strict_content_type=False)


# --- clusters -----------------------------------------------------------------------------------

@router.get(CLUSTERS, operation_id="listClusters", response_model=models.ClusterList)
async def list_clusters(
    registry: Registry,
    alias: Filter = ABSENT,
    api_server_url: Filter = ABSENT,
    channel: Filter = ABSENT,
    criticality_level: Level = ABSENT,
    environment: Filter = ABSENT,
    infrastructure_account: Filter = ABSENT,
    lifecycle_status: Annotated[models.ClusterLifecycleFilter, Query()] = ABSENT,
    local_id: Filter = ABSENT,
    provider: Filter = ABSENT,
    region: Filter = ABSENT,
    verbose: Verbose = True,
    cost_center: Filter = ABSENT,
) -> HTTPResponse:
    given = locals()
    where = {k: given[k] for k in validate.FILTERS if given[k] is not None}
    return await registry.run_list(
        lambda: registry.api.list_clusters(where, verbose=verbose, cost_center=cost_center))


@router.post(CLUSTERS, operation_id="createCluster", status_code=201,
             response_model=models.ClusterOut)
async def create_cluster(registry: Registry,
                         body: Annotated[models.Cluster, Body()]) -> HTTPResponse:
    return await registry.run(lambda: registry.api.create_cluster(_set(body)))


@router.get(CLUSTER, operation_id="getCluster", response_model=models.ClusterOut)
async def get_cluster(registry: Registry, cluster_id: ClusterId,
                      verbose: Verbose = True) -> HTTPResponse:
    return await registry.run(lambda: registry.api.get_cluster(cluster_id, verbose=verbose))


@router.patch(CLUSTER, operation_id="updateCluster", response_model=models.ClusterOut)
async def update_cluster(
    registry: Registry,
    cluster_id: ClusterId,
    body: Annotated[models.ClusterUpdate, Body()],
    cond: Conditional,
) -> HTTPResponse:
    return await registry.run(lambda: registry.api.patch_cluster(cluster_id, _set(body), cond))


@router.delete(CLUSTER, operation_id="deleteCluster", status_code=204)
async def delete_cluster(
    registry: Registry, cluster_id: ClusterId, cond: Conditional,
) -> HTTPResponse:
    return await registry.run(lambda: registry.api.delete_cluster(cluster_id, cond))


@router.put(ITEM, operation_id="addOrUpdateConfigItem", response_model=models.ConfigValue)
async def put_item(
    registry: Registry,
    cluster_id: ClusterId,
    config_key: ConfigKey,
    body: Annotated[models.ConfigValue, Body()],
    cond: Conditional,
) -> HTTPResponse:
    return await registry.run(
        lambda: registry.api.put_item(cluster_id, None, config_key, body.value, cond))


@router.delete(ITEM, operation_id="deleteConfigItem", status_code=204)
async def delete_item(
    registry: Registry, cluster_id: ClusterId, config_key: ConfigKey, cond: Conditional,
) -> HTTPResponse:
    return await registry.run(
        lambda: registry.api.delete_item(cluster_id, None, config_key, cond))


# --- node pools ---------------------------------------------------------------------------------

@router.get(POOLS, operation_id="listNodePools", response_model=models.NodePoolList)
async def list_pools(registry: Registry, cluster_id: ClusterId) -> HTTPResponse:
    return await registry.run(lambda: registry.api.list_pools(cluster_id))


@router.get(POOL, operation_id="getNodePool", response_model=models.NodePool)
async def get_pool(registry: Registry, cluster_id: ClusterId,
                   node_pool_name: PoolName) -> HTTPResponse:
    return await registry.run(lambda: registry.api.get_pool(cluster_id, node_pool_name))


@router.put(POOL, operation_id="createOrUpdateNodePool", response_model=models.NodePool)
async def put_pool(
    registry: Registry,
    cluster_id: ClusterId,
    node_pool_name: PoolName,
    body: Annotated[models.NodePool, Body()],
    cond: Conditional,
) -> HTTPResponse:
    return await registry.run(
        lambda: registry.api.put_pool(cluster_id, node_pool_name, _set(body), cond))


@router.patch(POOL, operation_id="updateNodePool", response_model=models.NodePool)
async def patch_pool(
    registry: Registry,
    cluster_id: ClusterId,
    node_pool_name: PoolName,
    body: Annotated[models.NodePoolUpdate, Body()],
    cond: Conditional,
) -> HTTPResponse:
    return await registry.run(
        lambda: registry.api.patch_pool(cluster_id, node_pool_name, _set(body), cond))


@router.delete(POOL, operation_id="deleteNodePool", status_code=204)
async def delete_pool(
    registry: Registry, cluster_id: ClusterId, node_pool_name: PoolName,
    cond: Conditional,
) -> HTTPResponse:
    return await registry.run(lambda: registry.api.delete_pool(cluster_id, node_pool_name, cond))


@router.put(POOL_ITEM, operation_id="addOrUpdateNodePoolConfigItem",
            response_model=models.ConfigValue)
async def put_pool_item(
    registry: Registry,
    cluster_id: ClusterId,
    node_pool_name: PoolName,
    config_key: ConfigKey,
    body: Annotated[models.ConfigValue, Body()],
    cond: Conditional,
) -> HTTPResponse:
    return await registry.run(lambda: registry.api.put_item(
        cluster_id, node_pool_name, config_key, body.value, cond))


@router.delete(POOL_ITEM, operation_id="deleteNodePoolConfigItem", status_code=204)
async def delete_pool_item(
    registry: Registry,
    cluster_id: ClusterId,
    node_pool_name: PoolName,
    config_key: ConfigKey,
    cond: Conditional,
) -> HTTPResponse:
    return await registry.run(lambda: registry.api.delete_item(
        cluster_id, node_pool_name, config_key, cond))


# --- infrastructure accounts --------------------------------------------------------------------

@router.get(ACCOUNTS, operation_id="listInfrastructureAccounts",
            response_model=models.InfrastructureAccountList)
async def list_accounts(
    registry: Registry,
    criticality_level: Level = ABSENT,
    environment: Filter = ABSENT,
    external_id: Filter = ABSENT,
    lifecycle_status: Annotated[models.AccountLifecycle, Query()] = ABSENT,
    name: Filter = ABSENT,
    owner: Filter = ABSENT,
    type: Filter = ABSENT,
    cost_center: Filter = ABSENT,
) -> HTTPResponse:
    # Every parameter but `registry` is a field to match.
    where = {k: v for k, v in locals().items() if k != "registry" and v is not None}
    return await registry.run(lambda: registry.api.list_accounts(where))


@router.post(ACCOUNTS, operation_id="createInfrastructureAccount", status_code=201,
             response_model=models.InfrastructureAccount)
async def create_account(registry: Registry,
                         body: Annotated[models.InfrastructureAccount, Body()]) -> HTTPResponse:
    return await registry.run(lambda: registry.api.create_account(_set(body)))


@router.get(ACCOUNT, operation_id="getInfrastructureAccount",
            response_model=models.InfrastructureAccount)
async def get_account(registry: Registry, account_id: AccountId) -> HTTPResponse:
    return await registry.run(lambda: registry.api.get_account(account_id))


@router.patch(ACCOUNT, operation_id="updateInfrastructureAccount",
              response_model=models.InfrastructureAccount)
async def patch_account(
    registry: Registry, account_id: AccountId,
    body: Annotated[models.InfrastructureAccountUpdate, Body()],
) -> HTTPResponse:
    return await registry.run(lambda: registry.api.patch_account(account_id, _set(body)))


@router.get("/openapi.yaml", include_in_schema=False)
def openapi_yaml(request: FastAPIRequest) -> HTTPResponse:
    text = yaml.safe_dump(request.app.openapi(), sort_keys=False)
    return HTTPResponse(text, media_type="application/yaml")
