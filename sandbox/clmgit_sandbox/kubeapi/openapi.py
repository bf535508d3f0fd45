"""OpenAPI documents for the served kinds, and the schemas strict field validation walks.

Built-in kinds take their schemas from the Kubernetes API definitions that the
`kubernetes-validate` package ships (JSON Schema rendered from the API server's own OpenAPI,
one set per Kubernetes release); they are turned back into OpenAPI here (`$ref`s re-pointed,
nullable type lists reduced to their type, int-or-string marked as the server marks it).
Custom resources take theirs from the CRD's `openAPIV3Schema`, ObjectMeta added.

Served:
- `/openapi/v3` (an index of group-versions, each with a `serverRelativeURL` carrying a hash) and
  `/openapi/v3/<api|apis/group>/<version>`: paths with the verbs and query parameters kubectl
  looks at (it checks that PATCH takes `fieldValidation` before it asks the server to validate),
  and `components.schemas` for `kubectl explain`;
- `/openapi/v2` as JSON only. client-go asks for v2 in protobuf; a 406 makes it give up on v2,
  which kubectl ≥ 1.27 does not need once v3 is there.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Iterator
from typing import Any

from clmgit_sandbox.kubeapi.resources import ResourceRegistry, ResourceType

Schema = dict[str, Any]

#: The Kubernetes release whose schemas the emulator serves (it reports v1.31 in /version).
SCHEMA_RELEASE = "v1.31.0"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
OBJECT_META = _META + "ObjectMeta"
V3_PREFIX = "#/components/schemas/"
V2_PREFIX = "#/definitions/"


class SchemaSourceMissing(RuntimeError):
    """The `kubernetes-validate` package (the built-in kinds' schemas) is not installed."""


def _definitions_file() -> str:
    try:
        import kubernetes_validate  # the schemas' source; imported late: only OpenAPI needs it
    except ImportError as e:
        raise SchemaSourceMissing(
            "the kubernetes-validate package is not installed; it holds the built-in schemas"
        ) from e
    root = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema")
    wanted = os.path.join(root, f"{SCHEMA_RELEASE}-local", "_definitions.json")
    if os.path.exists(wanted):
        return wanted
    releases = sorted(
        (d for d in os.listdir(root) if re.fullmatch(r"v1\.\d+\.\d+-local", d)),
        key=lambda d: tuple(int(p) for p in d[1:].split("-")[0].split(".")),
    )
    if not releases:
        raise SchemaSourceMissing("kubernetes-validate ships no schemas")
    return os.path.join(root, releases[-1], "_definitions.json")


def _convert(node: Any, prefix: str) -> Any:
    """JSON Schema (as kubernetes-validate renders it) back to OpenAPI, refs under `prefix`."""
    if isinstance(node, list):
        return [_convert(item, prefix) for item in node]
    if not isinstance(node, dict):
        return node
    one_of = node.get("oneOf")
    if isinstance(one_of, list) and {_single_type(o) for o in one_of} in (
        {"string", "integer"},
        {"string", "number"},
    ):
        rest = {k: v for k, v in node.items() if k != "oneOf"}
        if {_single_type(o) for o in one_of} == {"string", "integer"}:
            if prefix == V2_PREFIX:
                return {**rest, "type": "string", "format": "int-or-string"}
            return {**rest, "x-kubernetes-int-or-string": True}
        return {**rest, "type": "string"}  # resource.Quantity, as the server's document has it
    out: Schema = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = prefix + value.rsplit("/", 1)[-1]
        elif key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            out[key] = kinds[0] if len(kinds) == 1 else kinds
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _convert(sub, prefix) for name, sub in value.items()}
        else:
            out[key] = _convert(value, prefix)
    return out


def _single_type(node: Any) -> str:
    kinds = node.get("type") if isinstance(node, dict) else None
    if isinstance(kinds, list):
        kinds = [k for k in kinds if k != "null"]
        return kinds[0] if len(kinds) == 1 else ""
    return kinds or ""


@functools.lru_cache(maxsize=2)
def builtin_definitions(prefix: str = V3_PREFIX) -> dict[str, Schema]:
    """Every built-in definition by its OpenAPI name, refs under `prefix`."""
    with open(_definitions_file(), encoding="utf-8") as handle:
        raw = json.load(handle)
    definitions = raw.get("$defs") or raw.get("definitions") or {}
    return {name: _convert(schema, prefix) for name, schema in definitions.items()}


@functools.lru_cache(maxsize=1)
def _by_gvk() -> dict[tuple[str, str, str], str]:
    found: dict[tuple[str, str, str], str] = {}
    for name, schema in builtin_definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            found.setdefault((gvk.get("group", ""), gvk["version"], gvk["kind"]), name)
    return found


def definition_name(rtype: ResourceType) -> str | None:
    """The OpenAPI name of a built-in kind's schema (`io.k8s.api.apps.v1.Deployment`)."""
    return _by_gvk().get((rtype.group, rtype.version, rtype.kind)) if rtype.builtin else None


def crd_schema(rtype: ResourceType, prefix: str = V3_PREFIX) -> Schema:
    """A custom resource's schema as the server publishes it: apiVersion, kind and metadata
    added, the group-version-kind attached."""
    root = dict(getattr(rtype.schema, "openapi", None) or {"type": "object"})
    properties = dict(root.get("properties") or {})
    properties.setdefault("apiVersion", {"type": "string"})
    properties.setdefault("kind", {"type": "string"})
    properties["metadata"] = {"$ref": prefix + OBJECT_META}
    root["properties"] = properties
    root.setdefault("type", "object")
    root["x-kubernetes-group-version-kind"] = [
        {"group": rtype.group, "version": rtype.version, "kind": rtype.kind}
    ]
    return root


def schema_name(rtype: ResourceType) -> str:
    """Where a kind's schema sits in a document: the built-in name, or the server's CRD
    naming (reversed group, version, kind)."""
    name = definition_name(rtype)
    if name:
        return name
    group = ".".join(reversed(rtype.group.split(".")))
    return f"{group}.{rtype.version}.{rtype.kind}"


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value.rsplit("/", 1)[-1]
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _closure(roots: dict[str, Schema], definitions: dict[str, Schema]) -> dict[str, Schema]:
    """`roots` and every definition they reach through `$ref`."""
    found = dict(roots)
    pending = [ref for schema in roots.values() for ref in _refs(schema)]
    while pending:
        name = pending.pop()
        if name in found or name not in definitions:
            continue
        found[name] = definitions[name]
        pending.extend(_refs(definitions[name]))
    return found


# --- documents ---------------------------------------------------------------------------

_QUERY_PARAMS = {
    "get": ("pretty",),
    "list": ("labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "watch",
             "timeoutSeconds", "allowWatchBookmarks", "resourceVersionMatch"),
    "post": ("dryRun", "fieldManager", "fieldValidation"),
    "put": ("dryRun", "fieldManager", "fieldValidation"),
    "patch": ("dryRun", "fieldManager", "fieldValidation", "force"),
    "delete": ("dryRun", "gracePeriodSeconds", "propagationPolicy", "orphanDependents"),
    "deletecollection": ("dryRun", "labelSelector", "fieldSelector", "propagationPolicy"),
}
_PARAM_TYPES = {"limit": "integer", "timeoutSeconds": "integer", "gracePeriodSeconds": "integer",
                "watch": "boolean", "force": "boolean", "orphanDependents": "boolean",
                "allowWatchBookmarks": "boolean"}


def _parameters(action: str, v3: bool) -> list[dict[str, Any]]:
    params = []
    for name in _QUERY_PARAMS[action]:
        kind = _PARAM_TYPES.get(name, "string")
        param: dict[str, Any] = {"name": name, "in": "query", "uniqueItems": True}
        if v3:
            param["schema"] = {"type": kind}
        else:
            param["type"] = kind
        params.append(param)
    return params


def _operation(rtype: ResourceType, action: str, ref: str, *, v3: bool) -> dict[str, Any]:
    verb = {"post": "create", "put": "replace", "deletecollection": "deletecollection"}.get(
        action, action
    )
    op_id = verb + rtype.kind
    response: dict[str, Any] = (
        {"content": {"application/json": {"schema": {"$ref": ref}}}, "description": "OK"}
        if v3
        else {"schema": {"$ref": ref}, "description": "OK"}
    )
    op: dict[str, Any] = {
        "operationId": op_id,
        "parameters": _parameters(action, v3),
        "responses": {"200": response},
        "x-kubernetes-action": {"post": "post", "put": "put"}.get(action, action),
        "x-kubernetes-group-version-kind": {
            "group": rtype.group, "version": rtype.version, "kind": rtype.kind,
        },
    }
    if action in ("post", "put", "patch"):
        body_schema = {"$ref": ref} if action != "patch" else {"type": "object"}
        media = (
            ["application/json-patch+json", "application/merge-patch+json",
             "application/strategic-merge-patch+json", "application/apply-patch+yaml"]
            if action == "patch"
            else ["application/json", "application/yaml"]
        )
        if v3:
            op["requestBody"] = {"content": {m: {"schema": body_schema} for m in media}}
        else:
            op["parameters"].append(
                {"name": "body", "in": "body", "required": True, "schema": body_schema}
            )
            op["consumes"] = media
    return op


def _paths(rtype: ResourceType, prefix: str, *, v3: bool) -> dict[str, Any]:
    ref = prefix + schema_name(rtype)
    base = "/api/" + rtype.version if not rtype.group else f"/apis/{rtype.group}/{rtype.version}"
    scope = base + "/namespaces/{namespace}" if rtype.namespaced else base
    collection, item = f"{scope}/{rtype.plural}", f"{scope}/{rtype.plural}/{{name}}"
    path_params = [p for p in ("namespace", "name") if rtype.namespaced or p == "name"]

    def path_param(name: str) -> dict[str, Any]:
        param: dict[str, Any] = {"name": name, "in": "path", "required": True}
        param.update({"schema": {"type": "string"}} if v3 else {"type": "string"})
        return param

    paths = {
        collection: {
            "get": _operation(rtype, "list", ref, v3=v3),
            "post": _operation(rtype, "post", ref, v3=v3),
            "delete": _operation(rtype, "deletecollection", ref, v3=v3),
            "parameters": [path_param(p) for p in path_params if p != "name"],
        },
        item: {
            "get": _operation(rtype, "get", ref, v3=v3),
            "put": _operation(rtype, "put", ref, v3=v3),
            "patch": _operation(rtype, "patch", ref, v3=v3),
            "delete": _operation(rtype, "delete", ref, v3=v3),
            "parameters": [path_param(p) for p in path_params],
        },
    }
    if rtype.namespaced:
        # Listing across namespaces; kubectl explain finds a kind's GVK by this path.
        paths[f"{base}/{rtype.plural}"] = {"get": _operation(rtype, "list", ref, v3=v3)}
    if rtype.status_subresource:
        paths[item + "/status"] = {
            "get": _operation(rtype, "get", ref, v3=v3),
            "put": _operation(rtype, "put", ref, v3=v3),
            "patch": _operation(rtype, "patch", ref, v3=v3),
            "parameters": [path_param(p) for p in path_params],
        }
    return paths


def _schemas(types: list[ResourceType], prefix: str) -> dict[str, Schema]:
    definitions = builtin_definitions(prefix)
    roots: dict[str, Schema] = {}
    for rtype in types:
        name = schema_name(rtype)
        roots[name] = definitions[name] if rtype.builtin and name in definitions else (
            crd_schema(rtype, prefix)
        )
    # Status and the list kinds are what every group's responses refer to.
    roots.setdefault(_META + "Status", definitions[_META + "Status"])
    return _closure(roots, definitions)


def group_version_path(rtype: ResourceType) -> str:
    return f"apis/{rtype.group}/{rtype.version}" if rtype.group else f"api/{rtype.version}"


def v3_document(registry: ResourceRegistry, gv_path: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of one group-version (`api/v1`, `apis/apps/v1`), or None."""
    types = [t for t in registry.all() if group_version_path(t) == gv_path]
    if not types:
        return None
    paths: dict[str, Any] = {}
    for rtype in types:
        paths.update(_paths(rtype, V3_PREFIX, v3=True))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": SCHEMA_RELEASE},
        "paths": paths,
        "components": {"schemas": _schemas(types, V3_PREFIX)},
    }


def _hash(document: Any) -> str:
    return hashlib.sha512(json.dumps(document, sort_keys=True).encode()).hexdigest().upper()


def v3_index(registry: ResourceRegistry) -> dict[str, Any]:
    """`/openapi/v3`: each group-version with the URL of its document (hash of its content)."""
    paths: dict[str, Any] = {}
    for gv in sorted({group_version_path(t) for t in registry.all()}):
        digest = _hash(v3_document(registry, gv))
        paths[gv] = {"serverRelativeURL": f"/openapi/v3/{gv}?hash={digest}"}
    return {"paths": paths}


def v2_document(registry: ResourceRegistry) -> dict[str, Any]:
    """`/openapi/v2` (Swagger 2.0, JSON) with every served kind."""
    types = registry.all()
    paths: dict[str, Any] = {}
    for rtype in types:
        paths.update(_paths(rtype, V2_PREFIX, v3=False))
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": SCHEMA_RELEASE},
        "paths": paths,
        "definitions": _schemas(types, V2_PREFIX),
    }


# --- strict field validation ---------------------------------------------------------------


def unknown_fields(rtype: ResourceType, obj: dict[str, Any], *, drop: bool = False
                   ) -> list[str]:
    """Paths (`spec.replicaz`) of fields the kind's schema does not declare, as the server's
    strict decoding names them; `drop` also removes them from `obj`."""
    try:
        definitions = builtin_definitions()
    except SchemaSourceMissing:
        return []  # without schemas nothing can be judged unknown
    if rtype.builtin:
        root = definitions.get(definition_name(rtype) or "")
    elif getattr(rtype.schema, "openapi", None):
        root = crd_schema(rtype, V3_PREFIX)
    else:
        return []  # a CRD without a schema keeps whatever it is given
    if root is None:
        return []
    found: list[str] = []
    _walk(obj, root, "", definitions, found, drop)
    return found


def drop_unknown_fields(rtype: ResourceType, obj: dict[str, Any]) -> None:
    unknown_fields(rtype, obj, drop=True)


def _resolve(schema: Schema, definitions: dict[str, Schema]) -> Schema:
    for _ in range(20):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            schema = {**definitions.get(ref.rsplit("/", 1)[-1], {}),
                      **{k: v for k, v in schema.items() if k != "$ref"}}
            continue
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            schema = {**all_of[0], **{k: v for k, v in schema.items() if k != "allOf"}}
            continue
        break
    return schema


def _walk(value: Any, schema: Schema, path: str, definitions: dict[str, Schema],
          found: list[str], drop: bool = False) -> None:
    schema = _resolve(schema, definitions)
    if schema.get("x-kubernetes-preserve-unknown-fields") or schema.get(
        "x-kubernetes-embedded-resource"
    ):
        return
    if isinstance(value, dict):
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, sub in list(value.items()):
            where = f"{path}.{key}" if path else key
            if isinstance(properties, dict) and key in properties:
                _walk(sub, properties[key], where, definitions, found, drop)
            elif isinstance(extra, dict):
                _walk(sub, extra, where, definitions, found, drop)
            elif isinstance(properties, dict) and extra is not True:
                found.append(where)
                if drop:
                    del value[key]
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _walk(item, schema["items"], f"{path}[{index}]", definitions, found, drop)
