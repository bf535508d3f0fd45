"""How the server shapes a written object: checked against its URL, system fields carried over.

- `normalize`: the body's apiVersion, kind, namespace and name must agree with the URL (400
  otherwise) and are filled in from it; empty metadata maps and lists disappear (Go's
  `omitempty`); a Secret's write-only `stringData` is folded into `data`.
- `defaulted`: the scheme defaults the decoder fills in (a few; see `_SCHEME_DEFAULTS`).
- `carry_over`: what an update cannot change (uid, creationTimestamp, deletion fields, ...), the
  status of a kind with a status subresource (only `/status` writes it; the status endpoint in
  turn writes nothing else), and `metadata.generation`, which moves when anything but metadata
  and status changes.
"""

from __future__ import annotations

import base64
import copy
import secrets
import string
from typing import Any

from clmgit_sandbox.kubeapi.errors import bad_request
from clmgit_sandbox.kubeapi.resources import ResourceType
from clmgit_sandbox.kubeapi.store import Obj

_OMIT_EMPTY_METADATA = ("labels", "annotations", "finalizers", "ownerReferences")
_CARRIED_METADATA = (
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "resourceVersion",
)
_NAME_CHARS = string.ascii_lowercase + string.digits


def _check_api_version(rtype: ResourceType, obj: Obj) -> None:
    api_version = obj.get("apiVersion") or rtype.api_version
    same_group = api_version.rpartition("/")[0] == rtype.group
    # Served versions of a custom resource share objects: any of them may be written.
    if not same_group or (rtype.builtin and api_version != rtype.api_version):
        raise bad_request(
            f"the API version in the data ({api_version}) does not match the expected "
            f"API version ({rtype.api_version})"
        )
    if obj.get("kind", rtype.kind) != rtype.kind:
        raise bad_request(
            f"the kind in the data ({obj['kind']}) does not match the expected kind ({rtype.kind})"
        )


def _check_location(
    rtype: ResourceType, meta: Obj, namespace: str | None, name: str | None
) -> None:
    if rtype.namespaced:
        if meta.get("namespace") and meta["namespace"] != namespace:
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on the "
                "request"
            )
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    if name is not None:
        if meta.get("name") and meta["name"] != name:
            raise bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL "
                f"({name})"
            )
        meta["name"] = name


_FIELD_TYPES: dict[str, type] = {
    "name": str,
    "generateName": str,
    "namespace": str,
    "resourceVersion": str,
    "labels": dict,
    "annotations": dict,
    "finalizers": list,
    "ownerReferences": list,
    "managedFields": list,
}


def _check_types(rtype: ResourceType, obj: Obj) -> None:
    """Shapes the server's decoder would refuse (a 400), so the rest can rely on them."""
    meta = obj.get("metadata", {})
    if not isinstance(meta, dict):
        raise bad_request("metadata must be an object")
    for key, expected in _FIELD_TYPES.items():
        if meta.get(key) is not None and not isinstance(meta[key], expected):
            raise bad_request(f"metadata.{key} must be of type {expected.__name__}")
    for key in ("labels", "annotations"):
        if not all(isinstance(v, str) for v in (meta.get(key) or {}).values()):
            raise bad_request(f"metadata.{key} values must be strings")
    for key in ("spec", "status", "data"):
        if rtype.builtin and obj.get(key) is not None and not isinstance(obj[key], dict):
            raise bad_request(f"{key} must be an object")


def normalize(rtype: ResourceType, obj: Obj, namespace: str | None, name: str | None = None) -> Obj:
    """`obj` checked against and completed from its URL (see the module docstring)."""
    _check_api_version(rtype, obj)
    _check_types(rtype, obj)
    meta = obj.get("metadata") or {}
    _check_location(rtype, meta, namespace, name)
    for key in _OMIT_EMPTY_METADATA:
        if key in meta and not meta[key]:
            del meta[key]
    rest = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    if rtype.builtin and rtype.kind == "Secret" and "stringData" in rest:
        _fold_string_data(rest)
    return {"apiVersion": rtype.api_version, "kind": rtype.kind, "metadata": meta, **rest}


#: Scheme defaults, which the server's decoder fills in before anything else sees a written object:
#: the manager of a create, update or patch owns them (kubectl's client-side apply among them),
#: the manager of a server-side apply does not, and a default its apply prunes comes back. Two of
#: apps/v1 Deployment's, enough to show that; the emulator defaults nothing else.
_SCHEME_DEFAULTS: dict[tuple[str, str], dict[str, Any]] = {
    ("apps", "Deployment"): {"revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
}


def defaulted(rtype: ResourceType, obj: Obj) -> Obj:
    """`obj` with the scheme defaults of its kind filled in (in place; also returned)."""
    defaults = _SCHEME_DEFAULTS.get((rtype.group, rtype.kind)) if rtype.builtin else None
    if defaults and isinstance(obj.get("spec"), dict):
        for key, value in defaults.items():
            obj["spec"].setdefault(key, value)
    return obj


def _fold_string_data(secret: Obj) -> None:
    data = secret.setdefault("data", {})
    for key, value in (secret.pop("stringData") or {}).items():
        data[key] = base64.b64encode(str(value).encode()).decode()


def generate_name(meta: Obj) -> None:
    """Fill in `name` from `generateName` and a random suffix, as the server does."""
    if not meta.get("name"):
        meta["name"] = meta["generateName"] + "".join(secrets.choice(_NAME_CHARS) for _ in range(5))


def carry_over(rtype: ResourceType, live: Obj, new: Obj, subresource: str) -> Obj:
    """`new` with what the server keeps from `live` (see the module docstring)."""
    if subresource == "status":
        result = copy.deepcopy(live)
        given = new["metadata"].get("managedFields", live["metadata"].get("managedFields"))
        set_or_drop(result["metadata"], "managedFields", given)
        set_or_drop(result, "status", new.get("status"))
        return result
    meta, live_meta = new["metadata"], live["metadata"]
    for key in _CARRIED_METADATA:
        set_or_drop(meta, key, live_meta.get(key))
    if rtype.status_subresource:
        set_or_drop(new, "status", live.get("status"))
    if rtype.builtin and rtype.kind == "Namespace":
        set_or_drop(new, "spec", live.get("spec"))  # its finalizers change only through /finalize
    if _spec(new, rtype) != _spec(live, rtype):
        meta["generation"] = live_meta.get("generation", 1) + 1
    return new


def _spec(obj: Obj, rtype: ResourceType) -> Obj:
    skipped = {"apiVersion", "kind", "metadata"}
    if rtype.status_subresource:
        skipped.add("status")
    return {k: v for k, v in obj.items() if k not in skipped}


def set_or_drop(target: Obj, key: str, value: Any) -> None:
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value
