"""The registry server's HTTP face: a FastAPI application over `RegistryAPI`.

FastAPI (on Starlette) routes, checks bodies, paths and queries against `models`, and generates
the OpenAPI document from them; uvicorn (`httpd`) speaks HTTP. Here: bearer tokens, the limits
of `limits` that apply before a handler runs (body size, time to send the body, JSON depth and
contents), and every error as `application/problem+json` carrying upstream's `Error` fields
(`code`, `message`, `fields`) beside RFC 9457's, so CLM's generated client can read it too.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
from collections.abc import Callable, Coroutine, Sequence
from typing import Annotated, Any
from urllib.parse import parse_qsl, unquote_to_bytes

import yaml
from fastapi import Body, FastAPI, Header, Path, Query
from fastapi import Request as FastAPIRequest
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BeforeValidator
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import Response as HTTPResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clmgit.registry.server import limits, models, validate
from clmgit.registry.server.api import Conditions, RegistryAPI, Response
from clmgit.registry.server.db import SQLiteDatabase, Unavailable
from clmgit.registry.server.problems import LEASE_HEADER, Problem, bad_request

log = logging.getLogger(__name__)

PUBLIC_PATHS = frozenset({"/openapi.yaml", "/openapi.json"})
PROBLEM_JSON = "application/problem+json"
#: Error answers each operation may give (beyond 401 and 503, which any may).
ERRORS = {
    400: "Invalid request",
    401: "Unauthorized",
    404: "Not found",
    409: "Conflict: exists already, or the lease is held or lost",
    412: "Precondition failed: the record changed since the If-Match read",
    413: "The body is too large",
    500: "Unexpected error (a bug; see the server's log)",
    503: "The database is unavailable; try again",
}


# --- errors -------------------------------------------------------------------------------------


def problem_response(
    problem: Problem, headers: dict[str, str] | None = None, *, accept: str = ""
) -> HTTPResponse:
    """The answer for `problem`, as problem+json unless the client accepts only plain JSON
    (CLM's generated client sends `Accept: application/json` and reads only that)."""
    body = problem.body()
    # Upstream's `Error` (code, message, fields) beside RFC 9457's members.
    body.setdefault("code", problem.status)
    body.setdefault("message", problem.detail)
    out = dict(headers or {})
    if problem.status == 401:
        out["WWW-Authenticate"] = 'Bearer realm="clmgit-registry"'
    plain = "application/json" in accept and not ("+json" in accept or "*/*" in accept)
    media_type = "application/json" if plain else PROBLEM_JSON
    return HTTPResponse(
        models_dumps(body), status_code=problem.status, headers=out, media_type=media_type
    )


def models_dumps(value: Any) -> bytes:
    from clmgit.registry.server.rows import dumps

    return dumps(value).encode()


def _validation_problem(error: RequestValidationError) -> Problem:
    """The first error FastAPI found, as one sentence naming where it is."""
    first = error.errors()[0] if error.errors() else {"loc": (), "msg": "invalid request"}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body",)]
    where = ".".join(loc[1:]) if loc and loc[0] in ("query", "path", "header") else ".".join(loc)
    what = {"query": "query parameter ", "path": "path parameter ", "header": "header "}.get(
        loc[0] if loc else "", ""
    )
    message = str(first.get("msg", "invalid"))
    if first.get("type") == "missing" and not where:
        detail = "the request needs a JSON body"
    elif first.get("type") == "extra_forbidden":
        detail = f"the body has an unknown field: {where}"
    else:
        detail = f"{what}{where or 'the body'}: {message}"
    return Problem(400, "Bad Request", detail, extra={"fields": where})


def _allowed(app: FastAPI, scope: Scope) -> list[str]:
    """Every method some route answers on this path (Starlette names only the first route's)."""
    from starlette.routing import Match

    methods: set[str] = set()
    for route in app.router.routes:
        if route.matches(scope)[0] is not Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    if "GET" in methods:
        methods.add("HEAD")
    order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
    return [m for m in order if m in methods]


def _accept(request: FastAPIRequest) -> str:
    return request.headers.get("accept", "")


def install_error_handlers(app: FastAPI) -> None:
    async def on_problem(request: FastAPIRequest, error: Exception) -> HTTPResponse:
        assert isinstance(error, Problem)
        return problem_response(error, error.headers, accept=_accept(request))

    async def on_invalid(request: FastAPIRequest, error: Exception) -> HTTPResponse:
        assert isinstance(error, RequestValidationError)
        return problem_response(_validation_problem(error), accept=_accept(request))

    async def on_http(request: FastAPIRequest, error: Exception) -> HTTPResponse:
        assert isinstance(error, HTTPException)
        if isinstance(error.__cause__, Problem):  # raised while FastAPI read the body
            return problem_response(error.__cause__, accept=_accept(request))
        headers = dict(error.headers or {})
        if error.status_code == 405:
            allowed = _allowed(request.app, request.scope)
            headers["Allow"] = ", ".join(allowed)
            detail = f"use {', '.join(allowed)} on {request.url.path}"
            return problem_response(
                Problem(405, "Method Not Allowed", detail), headers, accept=_accept(request)
            )
        if error.status_code == 404:
            return problem_response(
                Problem(404, "Not Found", f"no such resource: {request.url.path}"),
                accept=_accept(request),
            )
        problem = Problem(error.status_code, "Error", str(error.detail))
        return problem_response(problem, headers, accept=_accept(request))

    async def on_unavailable(request: FastAPIRequest, error: Exception) -> HTTPResponse:
        log.warning("%s", error)
        problem = Problem(503, "Service Unavailable", "the database is unavailable")
        return problem_response(problem, {"Retry-After": "1"}, accept=_accept(request))

    async def on_bug(request: FastAPIRequest, error: Exception) -> HTTPResponse:
        log.exception("internal error serving %s %s", request.method, request.url.path)
        return problem_response(
            Problem(500, "Internal Server Error", "see the server's log"), accept=_accept(request)
        )

    app.add_exception_handler(Problem, on_problem)
    app.add_exception_handler(RequestValidationError, on_invalid)
    app.add_exception_handler(HTTPException, on_http)
    app.add_exception_handler(Unavailable, on_unavailable)
    app.add_exception_handler(Exception, on_bug)


# --- limits before the handler ------------------------------------------------------------------


class Guard:
    """ASGI middleware: the token, then the body's size and the time to send it (chunked
    bodies included, which carry no Content-Length)."""

    def __init__(self, app: ASGIApp, *, tokens: Sequence[str]) -> None:
        self.app = app
        self.tokens = [f"Bearer {t}".encode() for t in tokens]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        accept = headers.get(b"accept", b"").decode("latin-1")
        refusal = self._refusal(scope, headers, accept)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if b"transfer-encoding" in headers and b"content-length" in headers:
            # Framed two ways: a proxy in front may have read it the other way (RFC 9112 §6.1),
            # so whatever follows on this connection cannot be trusted.
            refusal = problem_response(
                bad_request("a request must not have both Content-Length and Transfer-Encoding"),
                {"Connection": "close"},
                accept=accept,
            )
            await refusal(scope, receive, send)
            return
        query_problem = _query_problem(scope["query_string"])
        if query_problem is not None:
            await problem_response(query_problem, accept=accept)(scope, receive, send)
            return
        length = headers.get(b"content-length", b"0")
        if length.isdigit() and int(length) > limits.MAX_BODY_BYTES:
            await _refuse_large(int(length), receive, scope, send, accept)
            return
        if scope["method"] == "HEAD":
            # A HEAD is answered as its GET; uvicorn sends the head without the body.
            scope = {**scope, "method": "GET"}
        await self.app(scope, _bounded(receive), send)

    def _refusal(
        self, scope: Scope, headers: dict[bytes, bytes], accept: str
    ) -> HTTPResponse | None:
        if scope["path"] not in PUBLIC_PATHS:
            given = headers.get(b"authorization", b"")
            # Compare with every token, always, so the time taken says nothing about which.
            matched = [hmac.compare_digest(given, token) for token in self.tokens]
            if not any(matched):
                return problem_response(
                    Problem(401, "Unauthorized", "a valid bearer token is required"),
                    accept=accept,
                )
        return None


def _query_problem(query: bytes) -> Problem | None:
    """Why a query string is refused, or None: invalid UTF-8 (Starlette would decode it with
    replacement characters), or a parameter given twice (every one of ours is single)."""
    try:
        unquote_to_bytes(query.replace(b"+", b" ")).decode()
    except UnicodeDecodeError:
        return bad_request("the query string is not valid UTF-8")
    names = [name for name, _ in parse_qsl(query.decode("latin-1"), keep_blank_values=True)]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        return bad_request(f"query parameters given more than once: {', '.join(twice)}")
    return None


async def _refuse_large(
    length: int, receive: Receive, scope: Scope, send: Send, accept: str
) -> None:
    """413 for a declared length over the limit. A body up to `DRAIN_BYTES` is read and
    dropped first, so that a client still sending it reads the answer instead of a reset;
    beyond that the connection is closed."""
    headers = {"Connection": "close"}
    if length <= limits.DRAIN_BYTES:
        headers = {}
        more = True
        while more:
            try:
                message = await asyncio.wait_for(receive(), limits.BODY_TIMEOUT_SECONDS)
            except TimeoutError:
                headers = {"Connection": "close"}
                break
            more = message["type"] == "http.request" and message.get("more_body", False)
    await problem_response(limits.too_large(), headers, accept=accept)(scope, receive, send)


def _bounded(receive: Receive) -> Receive:
    """`receive` that refuses a body beyond the size limit (413) or stalling (408)."""
    seen = 0
    done = False

    async def bounded() -> Message:
        nonlocal seen, done
        if done:
            return await receive()
        try:
            message = await asyncio.wait_for(receive(), limits.BODY_TIMEOUT_SECONDS)
        except TimeoutError:
            raise Problem(
                408, "Request Timeout",
                f"the body did not arrive within {limits.BODY_TIMEOUT_SECONDS:g} seconds",
            ) from None
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limits.MAX_BODY_BYTES:
                raise limits.too_large()
            done = not message.get("more_body", False)
        else:
            done = True
        return message

    return bounded


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


# --- routes -------------------------------------------------------------------------------------

ClusterId = Annotated[str, Path(pattern=models.CLUSTER_ID, max_length=253)]
AccountId = Annotated[str, Path(pattern=models.ACCOUNT_ID, max_length=253)]
PoolName = Annotated[str, Path(pattern=models.POOL_NAME, max_length=253)]
ConfigKey = Annotated[str, Path(pattern=models.CONFIG_KEY, max_length=253)]
#: Optional query parameters are declared without `| None` (and given a None default that the
#: document leaves out), so the schema says "a string", as CLM's does, not "a string or null".
Filter = Annotated[models.SafeStr, Query()]
IfMatch = Annotated[str, Header(alias="If-Match")]
Holder = Annotated[str, Header(alias=LEASE_HEADER)]
Verbose = Annotated[bool, Query()]
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


def send(response: Response) -> HTTPResponse:
    return HTTPResponse(
        response.body,
        status_code=response.status,
        headers=response.headers,
        media_type=response.content_type if response.status != 204 else None,
    )


def _set(model: Any) -> dict[str, Any]:
    return dict(model.model_dump(mode="python", exclude_unset=True))


def create_app(api: RegistryAPI, *, tokens: Sequence[str]) -> FastAPI:
    app = FastAPI(
        title="Cluster Registry",
        version="1.0.0",
        description="CLM's Cluster Registry API, served by clmgit, with leases.",
        openapi_url="/openapi.json",
        docs_url=None,
        redoc_url=None,
        separate_input_output_schemas=False,
        strict_content_type=False,
    )
    app.router.route_class = SafeRoute
    install_error_handlers(app)
    _routes(app, api)
    app.openapi = lambda: openapi_document(app)  # type: ignore[method-assign]

    @app.get("/openapi.yaml", include_in_schema=False)
    def openapi_yaml() -> HTTPResponse:
        text = yaml.safe_dump(app.openapi(), sort_keys=False)
        return HTTPResponse(text, media_type="application/yaml")

    app.add_middleware(Guard, tokens=tokens)
    return app


class _ListSlots:
    """At most `limits.MAX_CONCURRENT_LISTS` lists built at once: each holds every matching
    record (and then its JSON body) in memory, so many clients listing a large registry at
    once would otherwise take as much memory as they like. The others wait their turn on the
    event loop (not on a worker thread, which other requests need), and after
    `limits.LIST_WAIT_SECONDS` are answered 503 with Retry-After."""

    def __init__(self) -> None:
        self._slots = asyncio.Semaphore(limits.MAX_CONCURRENT_LISTS)

    async def build(self, make: Callable[[], HTTPResponse]) -> HTTPResponse:
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout=limits.LIST_WAIT_SECONDS)
        except TimeoutError:
            raise Problem(503, "Service Unavailable", "too many lists are being built at "
                          "once; try again shortly",
                          headers={"Retry-After": str(limits.RETRY_AFTER_SECONDS)}) from None
        try:
            return await run_in_threadpool(make)
        finally:
            self._slots.release()


def _routes(app: FastAPI, api: RegistryAPI) -> None:
    in_loop = isinstance(api.db, SQLiteDatabase)

    async def run(call: Callable[[], Response]) -> HTTPResponse:
        """SQLite is answered on the event loop: its writes are serialised anyway, and each
        hand-over to a worker thread and back costs a scheduling delay (tens of milliseconds
        on a loaded machine). PostgreSQL calls, which wait on the network, run on the thread
        pool so that requests overlap."""
        return send(call() if in_loop else await run_in_threadpool(call))

    lists = _ListSlots()
    clusters = "/kubernetes-clusters"
    cluster = clusters + "/{cluster_id}"
    pools = cluster + "/node-pools"
    pool = pools + "/{node_pool_name}"
    accounts = "/infrastructure-accounts"

    @app.get(clusters, operation_id="listClusters", response_model=models.ClusterList)
    async def list_clusters(
        alias: Filter = None,  # type: ignore[assignment]
        api_server_url: Filter = None,  # type: ignore[assignment]
        channel: Filter = None,  # type: ignore[assignment]
        criticality_level: Level = None,  # type: ignore[assignment]
        environment: Filter = None,  # type: ignore[assignment]
        infrastructure_account: Filter = None,  # type: ignore[assignment]
        lifecycle_status: Annotated[models.ClusterLifecycleFilter, Query()] = None,  # type: ignore[assignment]
        local_id: Filter = None,  # type: ignore[assignment]
        provider: Filter = None,  # type: ignore[assignment]
        region: Filter = None,  # type: ignore[assignment]
        verbose: Verbose = True,
        cost_center: Filter = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        given = locals()
        where = {k: given[k] for k in validate.FILTERS if given[k] is not None}
        if in_loop:  # answered one at a time anyway
            return send(api.list_clusters(where, verbose=verbose, cost_center=cost_center))
        return await lists.build(lambda: send(api.list_clusters(
            where, verbose=verbose, cost_center=cost_center)))

    @app.post(clusters, operation_id="createCluster", status_code=201,
              response_model=models.ClusterOut)
    async def create_cluster(body: Annotated[models.Cluster, Body()]) -> HTTPResponse:
        return await run(lambda: api.create_cluster(_set(body)))

    @app.get(cluster, operation_id="getCluster", response_model=models.ClusterOut)
    async def get_cluster(cluster_id: ClusterId, verbose: Verbose = True) -> HTTPResponse:
        return await run(lambda: api.get_cluster(cluster_id, verbose=verbose))

    @app.patch(cluster, operation_id="updateCluster", response_model=models.ClusterOut)
    async def update_cluster(
        cluster_id: ClusterId,
        body: Annotated[models.ClusterUpdate, Body()],
        if_match: IfMatch = None,  # type: ignore[assignment]
        holder: Holder = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        cond = Conditions(if_match, holder)
        return await run(lambda: api.patch_cluster(cluster_id, _set(body), cond))

    @app.delete(cluster, operation_id="deleteCluster", status_code=204)
    async def delete_cluster(
        cluster_id: ClusterId, if_match: IfMatch = None,  # type: ignore[assignment]
        holder: Holder = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        return await run(lambda: api.delete_cluster(cluster_id, Conditions(if_match, holder)))

    item = cluster + "/config-items/{config_key}"

    @app.put(item, operation_id="addOrUpdateConfigItem", response_model=models.ConfigValue)
    async def put_item(
        cluster_id: ClusterId,
        config_key: ConfigKey,
        body: Annotated[models.ConfigValue, Body()],
        if_match: IfMatch = None,  # type: ignore[assignment]
        holder: Holder = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        cond = Conditions(if_match, holder)
        return await run(lambda: api.put_item(cluster_id, config_key, body.value, cond))

    @app.delete(item, operation_id="deleteConfigItem", status_code=204)
    async def delete_item(
        cluster_id: ClusterId, config_key: ConfigKey, if_match: IfMatch = None,  # type: ignore[assignment]
        holder: Holder = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        cond = Conditions(if_match, holder)
        return await run(lambda: api.delete_item(cluster_id, config_key, cond))

    @app.get(pools, operation_id="listNodePools", response_model=models.NodePoolList)
    async def list_pools(cluster_id: ClusterId) -> HTTPResponse:
        return await run(lambda: api.list_pools(cluster_id))

    @app.get(pool, operation_id="getNodePool", response_model=models.NodePool)
    async def get_pool(cluster_id: ClusterId, node_pool_name: PoolName) -> HTTPResponse:
        return await run(lambda: api.get_pool(cluster_id, node_pool_name))

    @app.put(pool, operation_id="createOrUpdateNodePool", response_model=models.NodePool)
    async def put_pool(
        cluster_id: ClusterId,
        node_pool_name: PoolName,
        body: Annotated[models.NodePool, Body()],
        if_match: IfMatch = None,  # type: ignore[assignment]
        holder: Holder = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        cond = Conditions(if_match, holder)
        return await run(lambda: api.put_pool(cluster_id, node_pool_name, _set(body), cond))

    @app.patch(pool, operation_id="updateNodePool", response_model=models.NodePool)
    async def patch_pool(
        cluster_id: ClusterId,
        node_pool_name: PoolName,
        body: Annotated[models.NodePoolUpdate, Body()],
        if_match: IfMatch = None,  # type: ignore[assignment]
        holder: Holder = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        cond = Conditions(if_match, holder)
        return await run(lambda: api.patch_pool(cluster_id, node_pool_name, _set(body), cond))

    @app.delete(pool, operation_id="deleteNodePool", status_code=204)
    async def delete_pool(
        cluster_id: ClusterId, node_pool_name: PoolName, if_match: IfMatch = None,  # type: ignore[assignment]
        holder: Holder = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        cond = Conditions(if_match, holder)
        return await run(lambda: api.delete_pool(cluster_id, node_pool_name, cond))

    pool_item = pool + "/config-items/{config_key}"

    @app.put(pool_item, operation_id="addOrUpdateNodePoolConfigItem",
             response_model=models.ConfigValue)
    async def put_pool_item(
        cluster_id: ClusterId,
        node_pool_name: PoolName,
        config_key: ConfigKey,
        body: Annotated[models.ConfigValue, Body()],
        if_match: IfMatch = None,  # type: ignore[assignment]
        holder: Holder = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        cond = Conditions(if_match, holder)
        return await run(
            lambda: api.put_pool_item(cluster_id, node_pool_name, config_key, body.value, cond)
        )

    @app.delete(pool_item, operation_id="deleteNodePoolConfigItem", status_code=204)
    async def delete_pool_item(
        cluster_id: ClusterId,
        node_pool_name: PoolName,
        config_key: ConfigKey,
        if_match: IfMatch = None,  # type: ignore[assignment]
        holder: Holder = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        cond = Conditions(if_match, holder)
        return await run(lambda: api.delete_pool_item(cluster_id, node_pool_name, config_key, cond))

    @app.get(accounts, operation_id="listInfrastructureAccounts",
             response_model=models.InfrastructureAccountList)
    async def list_accounts(
        criticality_level: Level = None,  # type: ignore[assignment]
        environment: Filter = None,  # type: ignore[assignment]
        external_id: Filter = None,  # type: ignore[assignment]
        lifecycle_status: Annotated[models.AccountLifecycle, Query()] = None,  # type: ignore[assignment]
        name: Filter = None,  # type: ignore[assignment]
        owner: Filter = None,  # type: ignore[assignment]
        type: Filter = None,  # type: ignore[assignment]
        cost_center: Filter = None,  # type: ignore[assignment]
    ) -> HTTPResponse:
        given = locals()
        where = {k: given[k] for k in validate.ACCOUNT_FILTERS if given[k] is not None}
        return await run(lambda: api.list_accounts(where))

    @app.post(accounts, operation_id="createInfrastructureAccount", status_code=201,
              response_model=models.InfrastructureAccount)
    async def create_account(body: Annotated[models.InfrastructureAccount, Body()]) -> HTTPResponse:
        return await run(lambda: api.create_account(_set(body)))

    @app.get(accounts + "/{account_id}", operation_id="getInfrastructureAccount",
             response_model=models.InfrastructureAccount)
    async def get_account(account_id: AccountId) -> HTTPResponse:
        return await run(lambda: api.get_account(account_id))

    @app.patch(accounts + "/{account_id}", operation_id="updateInfrastructureAccount",
               response_model=models.InfrastructureAccount)
    async def patch_account(
        account_id: AccountId, body: Annotated[models.InfrastructureAccountUpdate, Body()]
    ) -> HTTPResponse:
        return await run(lambda: api.patch_account(account_id, _set(body)))


# --- the generated OpenAPI document -------------------------------------------------------------


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, with the bearer token, problem+json errors and no null defaults."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    from fastapi.openapi.utils import get_openapi

    doc = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = models.Error.model_json_schema(ref_template="#/components/schemas/{model}")
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    doc["security"] = [{"bearer": []}]
    schema = {"schema": {"$ref": "#/components/schemas/Error"}}
    error = {PROBLEM_JSON: schema, "application/json": schema}
    for item in doc["paths"].values():
        for operation in item.values():
            responses = operation["responses"]
            responses.pop("422", None)
            for status, description in ERRORS.items():
                responses.setdefault(str(status), {"description": description, "content": error})
            if operation.get("operationId") == "deleteCluster":
                # CLM's spec lists it; every valid token may delete, so it is not answered.
                responses["403"] = {"description": "Forbidden", "content": error}
            if operation.get("operationId") == "createOrUpdateNodePool":
                # 200 replaced a node pool, 201 created it.
                responses["201"] = {**responses["200"], "description": "Node pool created"}
    _drop_null_defaults(doc)
    app.openapi_schema = doc
    return doc


def _drop_null_defaults(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("default", 0) is None:
            del node["default"]
        for value in node.values():
            _drop_null_defaults(value)
    elif isinstance(node, list):
        for value in node:
            _drop_null_defaults(value)
