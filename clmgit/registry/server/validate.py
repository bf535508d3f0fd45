"""Validation of request bodies and query parameters: strict, with one sentence per refusal.

Records are checked field by field (unknown fields and wrong types are 400s) and then
normalised through the domain model, so that every stored record has every field, with CLM's
defaults, in one order.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from clmgit.errors import ConfigError
from clmgit.model import (
    CREATING,
    DECOMMISSION_REQUESTED,
    DECOMMISSIONED,
    READY,
    REQUESTED,
    cluster_to_dict,
    parse_cluster,
)
from clmgit.registry.server.problems import bad_request

LIFECYCLE_STATES = (REQUESTED, CREATING, READY, DECOMMISSION_REQUESTED, DECOMMISSIONED)
STATUS_FIELDS = frozenset({"current_version", "last_version", "next_version", "problems",
                           "applied_at"})
PROBLEM_FIELDS = frozenset({"type", "title", "detail"})
#: Query parameters of `GET /kubernetes-clusters`, each a column of the clusters table.
FILTERS = (
    "alias",
    "api_server_url",
    "channel",
    "criticality_level",
    "environment",
    "infrastructure_account",
    "lifecycle_status",
    "local_id",
    "provider",
    "region",
)
ACCOUNT_FIELDS = {
    "id": str,
    "name": str,
    "provider": str,
    "type": str,
    "owner": str,
    "environment": str,
    "criticality_level": int,
    "lifecycle_status": str,
    "external_id": str,
}

Check = Callable[[Any, str], None]
#: How errors name the request body as a whole; its fields are named by their own names.
BODY = "the body"


def parse_json(body: bytes) -> Any:
    if not body:
        raise bad_request("the request needs a JSON body")
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise bad_request(f"the body is not valid JSON: {e}") from None


def _string(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise bad_request(f"{where} must be a string")


def _integer(value: Any, where: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise bad_request(f"{where} must be an integer")


def _size(value: Any, where: str) -> None:
    _integer(value, where)
    if value < 0:
        raise bad_request(f"{where} must not be negative")


def _items(value: Any, where: str) -> None:
    if not isinstance(value, dict):
        raise bad_request(f"{where} must be an object of strings")
    for key, item in value.items():
        _string(item, f"{where}.{key}")


def _strings(value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise bad_request(f"{where} must be a list of strings")
    for i, item in enumerate(value):
        _string(item, f"{where}[{i}]")


def _lifecycle(value: Any, where: str) -> None:
    if value not in LIFECYCLE_STATES:
        raise bad_request(f"{where} must be one of {', '.join(LIFECYCLE_STATES)}")


def _problems(value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise bad_request(f"{where} must be a list")
    for i, problem in enumerate(value):
        at = f"{where}[{i}]"
        _fields(problem, at, {"type": _string, "title": _string, "detail": _string})
        if "type" not in problem or "title" not in problem:
            raise bad_request(f"{at} needs a type and a title")


def check_status(value: Any, where: str = "status") -> None:
    checks: dict[str, Check] = {f: _string for f in STATUS_FIELDS}
    checks["problems"] = _problems
    _fields(value, where, checks)


def _node_pool(value: Any, where: str) -> None:
    _fields(value, where, NODE_POOL_FIELDS)
    if not value.get("name"):
        raise bad_request(f"{where} needs a name")
    if value.get("max_size", 0) < value.get("min_size", 0):
        raise bad_request(f"{where}: max_size must not be below min_size")


def _node_pools(value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise bad_request(f"{where} must be a list")
    names = set()
    for i, pool in enumerate(value):
        _node_pool(pool, f"{where}[{i}]")
        if pool["name"] in names:
            raise bad_request(f"{where}: node pool {pool['name']!r} is listed twice")
        names.add(pool["name"])


def _fields(value: Any, where: str, checks: Mapping[str, Check]) -> None:
    """`value` is an object whose fields are all known and pass their check."""
    if not isinstance(value, dict):
        raise bad_request(f"{where} must be a JSON object")
    unknown = sorted(set(value) - set(checks))
    if unknown:
        raise bad_request(f"{where} has unknown fields: {', '.join(unknown)}")
    for name, field_value in value.items():
        checks[name](field_value, f"{where}.{name}" if where != BODY else name)


NODE_POOL_FIELDS: dict[str, Check] = {
    "name": _string,
    "profile": _string,
    "instance_types": _strings,
    "discount_strategy": _string,
    "min_size": _size,
    "max_size": _size,
    "config_items": _items,
}
CLUSTER_FIELDS: dict[str, Check] = {
    "id": _string,
    "alias": _string,
    "infrastructure_account": _string,
    "region": _string,
    "local_id": _string,
    "provider": _string,
    "api_server_url": _string,
    "channel": _string,
    "environment": _string,
    "criticality_level": _integer,
    "lifecycle_status": _lifecycle,
    "owner": _string,
    "config_items": _items,
    "node_pools": _node_pools,
    "status": check_status,
}


def _lease(value: Any, where: str) -> None:
    if value is None:
        return
    _fields(value, where, {"holder": _string, "ttl_seconds": _ttl, "take_over": _string})
    if not value.get("holder") or "ttl_seconds" not in value:
        raise bad_request(f"{where} needs a holder and ttl_seconds (or null to release)")


def _ttl(value: Any, where: str) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0:
        raise bad_request(f"{where} must be a number of seconds, zero or more")


PATCH_FIELDS: dict[str, Check] = {
    **{k: v for k, v in CLUSTER_FIELDS.items() if k != "id"},
    "lease": _lease,
}


def new_cluster(raw: Any) -> dict[str, Any]:
    """The body of `POST /kubernetes-clusters`, checked and normalised (status included)."""
    _fields(raw, BODY, CLUSTER_FIELDS)
    if not raw.get("id"):
        raise bad_request("a cluster needs a non-empty id")
    if "/" in raw["id"]:
        raise bad_request("a cluster id must not contain '/'")
    return normal_cluster(raw)


def cluster_patch(raw: Any) -> dict[str, Any]:
    """The body of `PATCH /kubernetes-clusters/{id}`, checked; fields it has replace the stored."""
    _fields(raw, BODY, PATCH_FIELDS)
    return raw


def node_pool(raw: Any, name: str) -> dict[str, Any]:
    """The body of `PUT .../node-pools/{name}`: a node pool whose name, if given, is `name`."""
    if isinstance(raw, dict) and raw.get("name", name) != name:
        raise bad_request(f"the body names node pool {raw['name']!r}, the path {name!r}")
    pool = {**raw, "name": name} if isinstance(raw, dict) else raw
    _node_pool(pool, BODY)
    return pool


def item_value(raw: Any) -> str:
    """The body of `PUT .../config-items/{key}`: `{"value": "..."}`."""
    _fields(raw, BODY, {"value": _string})
    if "value" not in raw:
        raise bad_request("the body needs a value")
    return str(raw["value"])


def account(raw: Any, *, new: bool) -> dict[str, Any]:
    checks: dict[str, Check] = {
        k: (_integer if t is int else _string) for k, t in ACCOUNT_FIELDS.items()
    }
    if not new:
        del checks["id"]
    _fields(raw, BODY, checks)
    if new and not raw.get("id"):
        raise bad_request("an infrastructure account needs a non-empty id")
    return raw


def normal_cluster(raw: dict[str, Any]) -> dict[str, Any]:
    """Every field, CLM's defaults filled in, in the model's order."""
    try:
        return cluster_to_dict(parse_cluster(raw, BODY))
    except ConfigError as e:
        raise bad_request(str(e)) from None


def normal_node_pool(raw: dict[str, Any]) -> dict[str, Any]:
    """A node pool with every field, normalised as part of a cluster would be."""
    return dict(normal_cluster({"id": "-", "node_pools": [raw]})["node_pools"][0])


def filters(query: Mapping[str, str]) -> dict[str, str | int]:
    """The query of `GET /kubernetes-clusters`: known filters only, criticality as a number."""
    unknown = sorted(set(query) - set(FILTERS) - {"verbose"})
    if unknown:
        raise bad_request(f"unknown query parameters: {', '.join(unknown)}")
    out: dict[str, str | int] = {k: v for k, v in query.items() if k in FILTERS}
    if "criticality_level" in out:
        try:
            out["criticality_level"] = int(out["criticality_level"])
        except ValueError:
            raise bad_request("criticality_level must be an integer") from None
    return out
