"""The write verbs: create, update, patch (merge, JSON, strategic, apply), delete, deletecollection.

Every write ends in `_commit`: an object equal to the stored one is not written (no new
resourceVersion), as the real server skips no-op updates; `dryRun=All` goes through everything
and writes nothing. Objects are shaped by `objects.py`, field ownership by `managed.py`.
"""

from __future__ import annotations

import copy
from typing import Any, cast

from clmgit_sandbox.kubeapi import codec, events, lifecycle, managed, openapi, subresources
from clmgit_sandbox.kubeapi.cluster import Cluster
from clmgit_sandbox.kubeapi.errors import (
    MODIFIED,
    APIError,
    FieldError,
    already_exists,
    bad_request,
    conflict,
    invalid,
    not_found,
    unprocessable,
    unsupported_media_type,
)
from clmgit_sandbox.kubeapi.eviction import evict
from clmgit_sandbox.kubeapi.messages import Request, Response
from clmgit_sandbox.kubeapi.objects import (
    carry_over,
    defaulted,
    generate_name,
    normalize,
    set_or_drop,
)
from clmgit_sandbox.kubeapi.patch import PatchError, json_patch, merge_patch, strategic_merge_patch
from clmgit_sandbox.kubeapi.resources import ResourceType
from clmgit_sandbox.kubeapi.routing import Route
from clmgit_sandbox.kubeapi.store import Obj
from clmgit_sandbox.kubeapi.validation import require_name, validate

_PATCHERS = {
    codec.JSON_PATCH: lambda obj, doc, schema: json_patch(obj, doc),
    codec.MERGE_PATCH: lambda obj, doc, schema: merge_patch(obj, doc),
    codec.STRATEGIC_PATCH: strategic_merge_patch,
}


class Writer:
    """Runs the write verbs against one cluster."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._warnings: list[str] = []  # of the request being served (under the store lock)

    def run(self, verb: str, route: Route, request: Request) -> Response:
        handlers = {
            "create": self.create,
            "update": self.update,
            "patch": self.patch,
            "delete": self.delete,
            "deletecollection": self.delete_collection,
        }
        self._warnings = []
        response = handlers[verb](route, request)
        if self._warnings:
            response.headers["Warning"] = ", ".join(
                '299 - "' + w.replace('"', '\\"') + '"' for w in self._warnings
            )
        return response

    def _check_fields(self, rtype: ResourceType, obj: Any, request: Request) -> None:
        """Strict field validation as the server does it: unknown fields are a 400 with
        `Strict`, a warning with `Warn` (the default), nothing with `Ignore`."""
        mode = request.query.get("fieldValidation") or "Warn"
        if mode not in ("Ignore", "Warn", "Strict"):
            raise bad_request(
                f'fieldValidation must be one of "Ignore", "Warn", or "Strict", not "{mode}"'
            )
        if not isinstance(obj, dict):
            return
        if mode == "Ignore":
            openapi.drop_unknown_fields(rtype, obj)
            return
        unknown = [f'unknown field "{path}"' for path in openapi.unknown_fields(rtype, obj)]
        if unknown and mode == "Strict":
            raise bad_request("strict decoding error: " + ", ".join(unknown))
        self._warnings += unknown
        openapi.drop_unknown_fields(rtype, obj)  # the decoder drops them, as pruning does

    def create(self, route: Route, request: Request) -> Response:
        obj = codec.decode_object(request.body, request.content_type)
        if route.subresource == "eviction":
            name, namespace = route.name or "", route.namespace or ""
            return Response(201, evict(self.cluster, namespace, name, obj, _dry_run(request)))
        rtype = route.rtype
        self._check_fields(rtype, obj, request)
        obj = defaulted(rtype, normalize(rtype, obj, route.namespace))
        require_name(rtype, obj)
        generate_name(obj["metadata"])
        if obj["metadata"].get("resourceVersion"):
            raise bad_request("resourceVersion should not be set on objects to be created")
        if rtype.status_subresource:
            obj.pop("status", None)
        return self._insert(rtype, obj, manager=_manager(request), dry_run=_dry_run(request))

    def update(self, route: Route, request: Request) -> Response:
        obj = codec.decode_object(request.body, request.content_type)
        self._check_fields(route.rtype, obj, request)
        obj = defaulted(route.rtype, normalize(route.rtype, obj, route.namespace, route.name))
        return self._replace(route, self._live(route), obj, request)

    def patch(self, route: Route, request: Request) -> Response:
        media = codec.media_type(request.content_type)
        if media == codec.APPLY_PATCH:
            return self.apply(route, request)
        if "force" in request.query:
            detail = "may not be specified for non-apply patch"
            raise invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                [FieldError("FieldValueForbidden", "force", detail)],
            )
        rtype = route.rtype
        # Strategic merge needs Go struct tags: custom resources do not support it.
        accepted = codec.PATCH_TYPES if rtype.builtin else codec.PATCH_TYPES[:3]
        if media not in accepted:
            raise unsupported_media_type(codec.unknown_format_message(accepted))
        document = codec.decode_patch(request.body, media)
        live = self._live(route)
        current = {"apiVersion": rtype.api_version, "kind": rtype.kind, **live}
        try:
            patched = _PATCHERS[media](current, document, rtype.schema)
        except PatchError as e:
            raise unprocessable(str(e)) from e
        if not isinstance(patched, dict):
            raise unprocessable("the patched document is not an object")
        self._check_fields(rtype, patched, request)
        patched = defaulted(rtype, normalize(rtype, patched, route.namespace, route.name))
        return self._replace(route, live, patched, request)

    def apply(self, route: Route, request: Request) -> Response:
        """Server-side apply; creates the object if it does not exist yet."""
        rtype, manager = route.rtype, request.query.get("fieldManager")
        if not manager:
            error = FieldError("FieldValueRequired", "fieldManager", "is required for apply patch")
            raise invalid("meta.k8s.io", "PatchOptions", "", [error])
        config = codec.decode_patch(request.body, codec.APPLY_PATCH)
        if not isinstance(config, dict) or not config.get("apiVersion") or not config.get("kind"):
            raise bad_request("an apply patch must be an object with apiVersion and kind")
        self._check_fields(rtype, config, request)
        config = normalize(rtype, config, route.namespace, route.name)
        options: dict[str, Any] = {
            "rtype": rtype,
            "manager": manager,
            "force": request.flag("force"),
            "subresource": route.subresource,
            "now": self.cluster.now(),
        }
        live = self.cluster.store.get(rtype.key, route.namespace or "", route.name or "")
        if live is None:
            if route.subresource:
                raise not_found(rtype.group, rtype.plural, route.name or "")
            where = {k: v for k, v in config["metadata"].items() if k in ("name", "namespace")}
            skeleton = {"apiVersion": rtype.api_version, "kind": rtype.kind, "metadata": where}
            obj = defaulted(rtype, managed.apply(skeleton, config, **options))
            return self._insert(rtype, obj, manager=None, dry_run=_dry_run(request))
        _check_resource_version(rtype, live, config)
        applied = defaulted(rtype, managed.apply(live, config, **options))
        new = carry_over(rtype, live, applied, route.subresource)
        validate(rtype, new, live)
        return self._commit(rtype, live, new, _dry_run(request))

    def scale(self, route: Route, request: Request) -> Response:
        """PUT or PATCH of `<workload>/scale`: only spec.replicas of the workload changes."""
        rtype, live = route.rtype, self._live(route)
        current = subresources.scale_of(self.cluster.present(rtype, live))
        if request.method == "PUT":
            wanted = codec.decode_object(request.body, request.content_type)
        else:
            media = codec.media_type(request.content_type)
            if media == codec.APPLY_PATCH or media not in codec.PATCH_TYPES:
                accepted = tuple(m for m in codec.PATCH_TYPES if m != codec.APPLY_PATCH)
                raise unsupported_media_type(codec.unknown_format_message(accepted))
            if media == codec.STRATEGIC_PATCH:
                media = codec.MERGE_PATCH  # a Scale has no lists: strategic is a merge
            try:
                wanted = _PATCHERS[media](current, codec.decode_patch(request.body, media),
                                          rtype.schema)
            except PatchError as e:
                raise unprocessable(str(e)) from e
        precondition = ((wanted or {}).get("metadata") or {}).get("resourceVersion")
        if precondition and precondition != live["metadata"]["resourceVersion"]:
            raise conflict(rtype.group, rtype.plural, live["metadata"]["name"], MODIFIED)
        replicas = subresources.replicas_from(wanted)
        new = copy.deepcopy(live)
        new.setdefault("spec", {})["replicas"] = replicas
        before = int((live.get("spec") or {}).get("replicas", 1))
        managed.record_update(live, new, rtype=rtype, manager=_manager(request),
                              subresource="scale", now=self.cluster.now())
        response = self._commit(rtype, live, new, _dry_run(request))
        if replicas != before and not _dry_run(request) and rtype.kind == "Deployment":
            direction = "up" if replicas > before else "down"
            events.record(self.cluster, response.body, "ScalingReplicaSet",
                          f"Scaled {direction} replica set {live['metadata']['name']} to "
                          f"{replicas} from {before}", component="deployment-controller")
        response.body = subresources.scale_of(response.body)
        return response

    def delete(self, route: Route, request: Request) -> Response:
        options = _delete_options(request)
        return Response(*lifecycle.delete(self.cluster, route.rtype, self._live(route), options))

    def delete_collection(self, route: Route, request: Request) -> Response:
        options, rtype = _delete_options(request), route.rtype
        deleted = self.cluster.select(rtype, route.namespace, request.query)
        for obj in deleted:
            lifecycle.delete(self.cluster, rtype, obj, options)
        return Response(200, self.cluster.list_body(rtype, deleted))

    def seed(self, obj: Obj) -> Obj:
        """Create or replace `obj` as the system would: status and given timestamps are kept."""
        rtype = self.cluster.registry.by_kind(obj.get("apiVersion", ""), obj.get("kind", ""))
        if rtype is None:
            raise ValueError(f"the emulator serves no {obj.get('kind')} in {obj.get('apiVersion')}")
        meta = obj.get("metadata") or {}
        namespace = (meta.get("namespace") or "default") if rtype.namespaced else None
        obj = normalize(rtype, obj, namespace)
        live = self.cluster.store.get(rtype.key, namespace or "", obj["metadata"].get("name", ""))
        if live is None:
            return cast(Obj, self._insert(rtype, obj, manager=None).body)
        status = copy.deepcopy(obj.get("status"))  # carry_over puts the live status in obj
        new = carry_over(rtype, live, obj, "")
        set_or_drop(new, "status", status)
        return cast(Obj, self._commit(rtype, live, new, dry_run=False).body)

    def _insert(
        self, rtype: ResourceType, obj: Obj, *, manager: str | None, dry_run: bool = False
    ) -> Response:
        """Store a new object. `manager=None` is the system: no field manager recorded, and a
        given uid or creationTimestamp is kept (seeding)."""
        meta = obj["metadata"]
        self._check_namespace(rtype, meta.get("namespace", ""))
        given = {k: meta[k] for k in ("uid", "creationTimestamp") if manager is None and k in meta}
        if manager is not None and "managedFields" not in meta:
            now = self.cluster.now()
            managed.record_update(None, obj, rtype=rtype, manager=manager, subresource="", now=now)
        self.cluster.initialize(rtype, obj)
        meta.update(given)
        validate(rtype, obj)
        if self.cluster.store.get(rtype.key, meta.get("namespace", ""), meta["name"]) is not None:
            raise already_exists(rtype.group, rtype.plural, meta["name"])
        return self._commit(rtype, None, obj, dry_run, code=201)

    def _check_namespace(self, rtype: ResourceType, namespace: str) -> None:
        """Admission's NamespaceLifecycle: the namespace must exist and not be terminating."""
        if not rtype.namespaced:
            return
        ns = self.cluster.store.get(("", "namespaces"), "", namespace)
        if ns is None:
            raise not_found("", "namespaces", namespace)
        if ns["metadata"].get("deletionTimestamp"):
            message = (
                f"unable to create new content in namespace {namespace} "
                "because it is being terminated"
            )
            raise APIError(403, "Forbidden", message, {"name": namespace, "kind": "namespaces"})

    def _replace(self, route: Route, live: Obj, new: Obj, request: Request) -> Response:
        """Write `new` over `live` through `route` (the main resource or its status)."""
        rtype = route.rtype
        _check_resource_version(rtype, live, new)
        new = carry_over(rtype, live, new, route.subresource)
        now, manager = self.cluster.now(), _manager(request)
        managed.record_update(
            live, new, rtype=rtype, manager=manager, subresource=route.subresource, now=now
        )
        validate(rtype, new, live)
        return self._commit(rtype, live, new, _dry_run(request))

    def _live(self, route: Route) -> Obj:
        rtype = route.rtype
        live = self.cluster.store.get(rtype.key, route.namespace or "", route.name or "")
        if live is None:
            raise not_found(rtype.group, rtype.plural, route.name or "")
        return live

    def _commit(
        self, rtype: ResourceType, live: Obj | None, new: Obj, dry_run: bool, code: int = 200
    ) -> Response:
        if live is not None and new == live:
            return Response(200, self.cluster.present(rtype, live))
        if dry_run:
            return Response(code, self.cluster.present(rtype, new))
        stored = self.cluster.store.put(rtype.key, new)
        deleting = bool(stored["metadata"].get("deletionTimestamp"))
        if rtype.builtin and rtype.kind == "CustomResourceDefinition" and not deleting:
            self.cluster.registry.register_crd(stored)
        if deleting:
            lifecycle.collect(self.cluster)  # a finalizer may just have been removed
        return Response(code, self.cluster.present(rtype, stored))


def _check_resource_version(rtype: ResourceType, live: Obj, new: Obj) -> None:
    """A resourceVersion in the body is a precondition: it must be the stored one."""
    wanted = new["metadata"].get("resourceVersion")
    if wanted and wanted != live["metadata"]["resourceVersion"]:
        raise conflict(rtype.group, rtype.plural, live["metadata"]["name"], MODIFIED)


def _manager(request: Request) -> str:
    """`fieldManager`, else the user agent up to its first `/`, as the server defaults it."""
    return request.query.get("fieldManager") or request.user_agent.split("/")[0] or "unknown"


def _dry_run(request: Request) -> bool:
    return lifecycle.parse_dry_run([request.query["dryRun"]] if "dryRun" in request.query else [])


def _delete_options(request: Request) -> lifecycle.DeleteOptions:
    body = codec.decode_object(request.body, request.content_type) if request.body.strip() else None
    return lifecycle.DeleteOptions.parse(body, request.query)
