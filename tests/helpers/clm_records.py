"""Registry records as CLM decodes and hashes them: a reference encoder written from CLM's byte
layout (api/cluster.go) over the values CLM's decoders produce, and this project's own records
(`OWN`: name → how the record differs from `BASE`), for tests/registry_clm."""

from __future__ import annotations

import base64
import copy
import hashlib
import struct
from typing import Any

SHA = "9f1b3697c6f1d2a1e0c4b7d8e9f0a1b2c3d4e5f6"


def clm_version(sha: str, go: dict[str, Any]) -> str:
    """`api.Cluster.Version` over a record as CLM holds it after decoding (every field present,
    "" / 0 / empty for what was missing or null)."""
    state = bytearray()
    for key in ("id", "infrastructure_account", "local_id", "api_server_url", "channel",
                "environment"):
        state += go[key].encode()
    state += struct.pack("<i", go["criticality_level"])
    for key in ("lifecycle_status", "provider", "region"):
        state += go[key].encode()
    for key in sorted(go["config_items"]):
        state += key.encode() + go["config_items"][key].encode()
    for pool in go["node_pools"]:
        state += pool["name"].encode() + pool["profile"].encode()
        for instance_type in pool["instance_types"]:
            state += instance_type.encode()
        state += pool["discount_strategy"].encode()
        state += struct.pack("<q", pool["min_size"]) + struct.pack("<q", pool["max_size"])
        for key in sorted(pool["config_items"]):
            state += key.encode() + pool["config_items"][key].encode()
    digest = base64.urlsafe_b64encode(hashlib.sha1(state).digest()).rstrip(b"=").decode()
    return f"{sha}#{digest}"


def decoded(record: dict[str, Any]) -> dict[str, Any]:
    """What Go's encoding/json makes of a plain JSON record with string values (missing → "")."""
    pools = [{"name": p.get("name") or "", "profile": p.get("profile") or "",
              "instance_types": list(p.get("instance_types") or []),
              "discount_strategy": p.get("discount_strategy") or "",
              "min_size": p.get("min_size") or 0, "max_size": p.get("max_size") or 0,
              "config_items": dict(p.get("config_items") or {})}
             for p in record.get("node_pools") or []]
    go = {k: record.get(k) or "" for k in (
        "id", "infrastructure_account", "local_id", "api_server_url", "channel", "environment",
        "lifecycle_status", "provider", "region")}
    go["criticality_level"] = record.get("criticality_level") or 0
    go["config_items"] = dict(record.get("config_items") or {})
    go["node_pools"] = pools
    return go


BASE: dict[str, Any] = {
    "id": "aws:123456789012:eu-central-1:kube-9",
    "alias": "kube-9",
    "infrastructure_account": "aws:123456789012",
    "region": "eu-central-1",
    "local_id": "kube-9",
    "provider": "zalando-aws",
    "api_server_url": "https://kube-9.foo.example.org/",
    "channel": "beta",
    "environment": "test",
    "criticality_level": 2,
    "lifecycle_status": "ready",
    "config_items": {"team": "platform"},
    "node_pools": [{"name": "worker", "profile": "worker-default",
                    "instance_types": ["m5.large"], "discount_strategy": "none",
                    "min_size": 1, "max_size": 3, "config_items": {}}],
}


def _drop(key: str):
    return lambda r: r.pop(key)


def _set(key: str, value: Any):
    return lambda r: r.__setitem__(key, value)


def _pool(key: str, value: Any):
    return lambda r: r["node_pools"][0].__setitem__(key, value)


def _pool_drop(key: str):
    return lambda r: r["node_pools"][0].pop(key)


def _item(key: str, value: str):
    return lambda r: r["config_items"].__setitem__(key, value)


def _extra_pool(r):
    r["node_pools"].append({"name": "spot", "profile": "worker-splitaz",
                            "instance_types": ["c5.xlarge", "c5a.xlarge", "m5.xlarge"],
                            "discount_strategy": "spot_max_price", "min_size": 0,
                            "max_size": 100, "config_items": {"taints": "a=b:NoSchedule"}})


def _karpenter(r):
    r["node_pools"].append({"name": "karp", "profile": "worker-karpenter", "instance_types": [],
                            "min_size": 0, "max_size": 0})


# name → how the record differs from BASE (every record must stay one CLM accepts).
OWN: dict[str, Any] = {
    "base": lambda r: None,
    "no-provider": _drop("provider"),
    "null-provider": _set("provider", None),
    "empty-provider": _set("provider", ""),
    "no-lifecycle": _drop("lifecycle_status"),
    "null-lifecycle": _set("lifecycle_status", None),
    "requested": _set("lifecycle_status", "requested"),
    "decommission-requested": _set("lifecycle_status", "decommission-requested"),
    "no-discount": _pool_drop("discount_strategy"),
    "null-discount": _pool("discount_strategy", None),
    "spot-discount": _pool("discount_strategy", "spot"),
    "no-alias": _drop("alias"),
    "no-environment": _drop("environment"),
    "no-channel": _drop("channel"),
    "no-region": _drop("region"),
    "no-local-id": _drop("local_id"),
    "criticality-0": _set("criticality_level", 0),
    "criticality-missing": _drop("criticality_level"),
    "criticality-max-int32": _set("criticality_level", 2**31 - 1),
    "criticality-negative": _set("criticality_level", -1),
    "sizes-large": _pool("max_size", 2**40),
    "sizes-missing": _pool_drop("min_size"),
    "pool-items-missing": _pool_drop("config_items"),
    "pool-items-null": _pool("config_items", None),
    "items-null": _set("config_items", None),
    "items-empty": _set("config_items", {}),
    "items-many": lambda r: r["config_items"].update({f"k{i:02}": f"v{i}" for i in range(30)}),
    "item-empty-value": _item("empty", ""),
    "item-unicode": _item("greeting", "grüße ☃ 日本語 😀"),
    "item-newlines": _item("script", "line1\nline2\n"),
    "item-hash": _item("h", "a#b#c"),
    "item-key-order-bytes": lambda r: r["config_items"].update({"Z": "1", "a": "2", "é": "3",
                                                                "_": "4"}),
    "item-json-text": _item("json", '{"a": [1, 2]}'),
    "item-looks-like-number": _item("v", "1.20"),
    "item-looks-like-bool": _item("flag", "yes"),
    "two-pools": _extra_pool,
    "karpenter-pool-without-types": _karpenter,
    "pools-empty": _set("node_pools", []),
    "pools-null": _set("node_pools", None),
    "many-types": _pool("instance_types", [f"m{i}.large" for i in range(5, 9)]),
    "eks-without-url": lambda r: (r.update(provider="zalando-eks"), r.pop("api_server_url")),
    "url-with-port": _set("api_server_url", "https://kube-9.example.org:8443"),
    "owner-set": _set("owner", "team-x"),
    "unknown-field": _set("account_name", "prod-1"),
    "status-present": _set("status", {"current_version": "x#y", "next_version": "",
                                      "problems": [{"type": "t", "title": "u", "status": 500}]}),
}


def own_record(name: str) -> dict[str, Any]:
    record = copy.deepcopy(BASE)
    OWN[name](record)
    return record
