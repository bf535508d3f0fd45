"""The API server's request handling, free of HTTP: a `Request` in, a `Response` out.

Owns dispatch (discovery, or verb by method and route), the read verbs (get, list with
selectors and paging) and the errors for verbs a route does not take; the write verbs are in
`writes.py`. Each request runs under the store's lock, so it is atomic and `mutated` is exact.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from clmgit_sandbox.kubeapi import codec, discovery, openapi, openapi_pb, subresources, table, watch
from clmgit_sandbox.kubeapi.cluster import Cluster
from clmgit_sandbox.kubeapi.errors import (
    APIError,
    bad_request,
    method_not_allowed,
    not_found,
    path_not_found,
)
from clmgit_sandbox.kubeapi.messages import Request, Response
from clmgit_sandbox.kubeapi.resources import REVIEW_KINDS, ResourceType
from clmgit_sandbox.kubeapi.routing import Route, resolve
from clmgit_sandbox.kubeapi.store import Obj
from clmgit_sandbox.kubeapi.writes import Writer

HEALTH_PATHS = {"/healthz", "/livez", "/readyz"}


class KubeAPI:
    """Serves one `Cluster`."""

    def __init__(self, cluster: Cluster, server_address: str = "127.0.0.1") -> None:
        self.cluster = cluster
        self.server_address = server_address
        self.writer = Writer(cluster)
        self._documents: dict[Any, Any] = {}

    def handle(self, request: Request) -> Response:
        """Serve one request; API errors become their `Status` response."""
        response = Response(0, None, verb="error")
        with self.cluster.store.lock:
            before = self.cluster.store.revision
            try:
                self._dispatch(request, response)
            except APIError as e:
                response.code, response.body = e.code, e.body()
            response.mutated = self.cluster.store.revision != before
        return response

    def _dispatch(self, request: Request, response: Response) -> None:
        if request.path.startswith("/openapi/"):
            self._openapi(request, response)
            return
        found = self._discovery(request.path)
        if found is not None:
            if request.method != "GET":
                raise method_not_allowed()
            response.code, response.body, response.verb = 200, found, "discovery"
            return
        route = resolve(self.cluster.registry, request.path)
        if route is None:
            raise path_not_found()
        response.resource, response.namespace, response.name = (
            route.resource_label,
            route.namespace or "",
            route.name or "",
        )
        response.verb = _verb(request, route)
        result = self._run(response.verb, route, request)
        response.code, response.body, response.stream = result.code, result.body, result.stream
        response.headers.update(result.headers)
        response.content_type = result.content_type

    def _cached(self, name: str, build: Callable[[], Any]) -> Any:
        """A document built once per set of served types (a CRD changes the set)."""
        key = (name, tuple((t.group, t.version, t.plural, id(t.schema))
                           for t in self.cluster.registry.all()))
        if key not in self._documents:
            if len(self._documents) > 8:
                self._documents.clear()
            self._documents[key] = build()
        return self._documents[key]

    def _openapi(self, request: Request, response: Response) -> None:
        if request.method != "GET":
            raise method_not_allowed()
        registry, path = self.cluster.registry, request.path.rstrip("/")
        response.verb = "discovery"
        if path == "/openapi/v2":
            document = self._cached("v2", lambda: openapi.v2_document(registry))
            response.code, response.body = 200, document
            if "protobuf" in request.accept:
                response.body = self._cached("v2pb", lambda: openapi_pb.document(document))
                response.content_type = openapi_pb.MEDIA_TYPE
            return
        if path == "/openapi/v3":
            response.code, response.body = 200, openapi.v3_index(registry)
            return
        document = openapi.v3_document(registry, path.removeprefix("/openapi/v3/"))
        if document is None:
            raise path_not_found()
        response.code, response.body = 200, document

    def _discovery(self, path: str) -> Any:
        registry = self.cluster.registry
        parts = [part for part in path.split("/") if part]
        if path in HEALTH_PATHS:
            return "ok"
        if parts == ["version"]:
            return discovery.VERSION_INFO
        if parts == ["api"]:
            return discovery.core_versions(self.server_address)
        if parts == ["api", "v1"]:
            return discovery.resource_list(registry, "", "v1")
        if parts == ["apis"]:
            return discovery.group_list(registry)
        if len(parts) == 2 and parts[0] == "apis":
            return discovery.group(registry, parts[1]) or _raise(path_not_found())
        if len(parts) == 3 and parts[0] == "apis":
            return discovery.resource_list(registry, parts[1], parts[2]) or _raise(path_not_found())
        return None

    def _run(self, verb: str, route: Route, request: Request) -> Response:
        rtype, sub = route.rtype, route.subresource
        if rtype.builtin and rtype.kind in REVIEW_KINDS:
            body = codec.decode_object(request.body, request.content_type)
            return Response(201, subresources.review(rtype.kind, body))
        if sub == "log":
            pod = self.cluster.present(rtype, self._live(route))
            return Response(200, subresources.pod_log(pod, request))
        if sub == "scale":
            if verb == "get":
                return Response(200, subresources.scale_of(
                    self.cluster.present(rtype, self._live(route))))
            return self.writer.scale(route, request)
        if verb == "get":
            return self._get(route, request)
        if verb == "list":
            return self._list(route, request)
        return self.writer.run(verb, route, request)

    def _live(self, route: Route) -> Obj:
        rtype = route.rtype
        obj = self.cluster.store.get(rtype.key, route.namespace or "", route.name or "")
        if obj is None:
            raise not_found(rtype.group, rtype.plural, route.name or "")
        return obj

    def _get(self, route: Route, request: Request) -> Response:
        obj = self.cluster.present(route.rtype, self._live(route))
        if table.wants_table(request.accept):
            return Response(200, table.table(route.rtype, [obj], accept=request.accept,
                                             query=request.query))
        return Response(200, obj)

    def _list(self, route: Route, request: Request) -> Response:
        rtype = route.rtype
        if request.flag("watch"):
            render = self._renderer(request)
            events = watch.stream(self.cluster, rtype, route.namespace, request.query, render)
            return Response(200, None, stream=events)
        objects = self.cluster.select(rtype, route.namespace, request.query)
        items, metadata = _page(objects, request.query.get("continue"), request.integer("limit"))
        if table.wants_table(request.accept):
            presented = [self.cluster.present(rtype, obj) for obj in items]
            meta = {"resourceVersion": str(self.cluster.store.revision), **metadata}
            return Response(200, table.table(rtype, presented, accept=request.accept,
                                             query=request.query, list_metadata=meta))
        return Response(200, self.cluster.list_body(rtype, items, metadata))

    def _renderer(self, request: Request) -> watch.Render:
        """How a watch shows each object: itself, or a one-row Table."""
        if not table.wants_table(request.accept):
            return self.cluster.present

        def render(rtype: ResourceType, obj: Obj) -> Any:
            presented = self.cluster.present(rtype, obj)
            return table.table(rtype, [presented], accept=request.accept, query=request.query)

        return render


def _page(
    objects: list[Obj], token: str | None, limit: int | None
) -> tuple[list[Obj], dict[str, Any]]:
    """`limit`/`continue` paging; the token carries the last (namespace, name) served."""
    if token:
        after = _decode_token(token)
        objects = [o for o in objects if _ident(o) > after]
    if not limit or limit <= 0 or len(objects) <= limit:
        return objects, {}
    page = objects[:limit]
    token = base64.urlsafe_b64encode(json.dumps(list(_ident(page[-1]))).encode()).decode()
    return page, {"continue": token, "remainingItemCount": len(objects) - limit}


def _decode_token(token: str) -> tuple[str, str]:
    try:
        namespace, name = json.loads(base64.urlsafe_b64decode(token.encode()))
        return str(namespace), str(name)
    except (ValueError, TypeError) as e:
        raise bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion"
        ) from e


def _ident(obj: Obj) -> tuple[str, str]:
    return (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def _verb(request: Request, route: Route) -> str:
    method, named, sub = request.method, route.name is not None, route.subresource
    if sub == "eviction" or (route.rtype.builtin and route.rtype.kind in REVIEW_KINDS):
        verbs = {"POST": "create"} if not named or sub else {}
    elif sub == "log":
        verbs = {"GET": "get"}
    elif sub:
        verbs = {"GET": "get", "PUT": "update", "PATCH": "patch"}
    elif named:
        verbs = {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
    else:
        verbs = {"GET": "list", "POST": "create", "DELETE": "deletecollection"}
        if route.rtype.namespaced and route.namespace is None:
            verbs = {"GET": "list"}
    if method not in verbs:
        raise method_not_allowed()
    return verbs[method]


def _raise(error: APIError) -> Any:
    raise error
