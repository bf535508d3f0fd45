"""The registry server's HTTP face: a FastAPI application over `RegistryAPI`.

FastAPI (on Starlette) routes, checks bodies, paths and queries against `models`, and generates
the OpenAPI document from them; uvicorn (`httpd`) speaks HTTP. Here: bearer tokens, the limits
of `limits` that apply before a handler runs (body size, time to send the body, JSON depth and
contents), and every error as `application/problem+json` carrying upstream's `Error` fields
(`code`, `message`, `fields`) beside RFC 9457's, so CLM's generated client can read it too. The
operations are `routes`.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

from fastapi import FastAPI
from fastapi import Request as FastAPIRequest
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response as HTTPResponse
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clmgit.registry.server import limits, models
from clmgit.registry.server.api import RegistryAPI
from clmgit.registry.server.db import Unavailable
from clmgit.registry.server.problems import Problem, bad_request
from clmgit.registry.server.routes import Served, router
from clmgit.registry.server.rows import dumps

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
    return HTTPResponse(dumps(body), status_code=problem.status, headers=out, media_type=media_type)


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
        headers = dict(error.headers or {})
        if isinstance(error.__cause__, Problem):  # raised while FastAPI read the body
            problem, headers = error.__cause__, {}
        elif error.status_code == 405:
            allowed = _allowed(request.app, request.scope)
            headers["Allow"] = ", ".join(allowed)
            problem = Problem(405, "Method Not Allowed",
                              f"use {', '.join(allowed)} on {request.url.path}")
        elif error.status_code == 404:
            problem = Problem(404, "Not Found", f"no such resource: {request.url.path}")
            headers = {}
        else:
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
        self.tokens = [t.encode() for t in tokens]

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
        """The answer to a request refused before its body is read: no valid token, framed
        two ways, or a query string refused (`_query_problem`); None if it may go on."""
        if scope["path"] not in PUBLIC_PATHS and not bearer_matches(
                headers.get(b"authorization", b""), self.tokens):
            return problem_response(
                Problem(401, "Unauthorized", "a valid bearer token is required"), accept=accept
            )
        if b"transfer-encoding" in headers and b"content-length" in headers:
            # Framed two ways: a proxy in front may have read it the other way (RFC 9112 §6.1),
            # so whatever follows on this connection cannot be trusted.
            return problem_response(
                bad_request("a request must not have both Content-Length and Transfer-Encoding"),
                {"Connection": "close"},
                accept=accept,
            )
        problem = _query_problem(scope["query_string"])
        return None if problem is None else problem_response(problem, accept=accept)


_CREDENTIALS = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+) +(\S+) *")


def bearer_matches(header: bytes, tokens: Sequence[bytes]) -> bool:
    """Whether an Authorization header carries one of `tokens` as Bearer credentials (RFC 9110
    §11.4: the scheme is case-insensitive, one or more spaces before the credentials, which
    compare byte for byte). Every token is compared, always, so that the time taken says nothing
    about which one came close."""
    match = _CREDENTIALS.fullmatch(header)
    bearer = match is not None and match.group(1).lower() == b"bearer"
    given = match.group(2) if match is not None else b""
    matched = [hmac.compare_digest(given, token) for token in tokens]
    return bearer and any(matched)


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


# --- the application ----------------------------------------------------------------------------


class RegistryApp(FastAPI):
    """The application, its OpenAPI document `openapi_document`'s."""

    def openapi(self) -> dict[str, Any]:
        return openapi_document(self)


def create_app(api: RegistryAPI, *, tokens: Sequence[str]) -> FastAPI:
    app = RegistryApp(
        title="Cluster Registry",
        version="1.0.0",
        description="CLM's Cluster Registry API, served by clmgit, with leases.",
        openapi_url="/openapi.json",
        docs_url=None,
        redoc_url=None,
        separate_input_output_schemas=False,
        strict_content_type=False,
        # The module's routes as they are (not `include_router`, which wraps them in one route
        # that `_allowed` could not ask for its methods).
        routes=router.routes,
    )
    app.state.registry = Served(api)
    install_error_handlers(app)
    app.add_middleware(Guard, tokens=tokens)
    return app


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
