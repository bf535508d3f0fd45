"""Normalisation of checked records: every stored record has every field, with CLM's defaults,
in one order. Bodies arrive here already checked against `models` (types, patterns, bounds);
what is left is filling in defaults through the domain model, and keeping what the model does
not carry (a problem's `status` and `instance`, which CLM writes and reads back).
"""

from __future__ import annotations

from typing import Any

from clmgit.errors import ConfigError
from clmgit.model import cluster_to_dict, parse_cluster
from clmgit.registry.server.problems import bad_request

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
#: Query parameters of `GET /infrastructure-accounts`.
ACCOUNT_FILTERS = (
    "criticality_level",
    "environment",
    "external_id",
    "lifecycle_status",
    "name",
    "owner",
    "type",
    "cost_center",
)


def normal_cluster(raw: dict[str, Any]) -> dict[str, Any]:
    """Every field, CLM's defaults filled in, in the model's order."""
    try:
        return cluster_to_dict(parse_cluster(raw, "the body"))
    except ConfigError as e:
        raise bad_request(str(e)) from None


def keep_problems(normal: dict[str, Any], raw: dict[str, Any] | None) -> dict[str, Any]:
    """A normalised status with the problems as sent, every member kept (detail defaults to
    an empty string, as the model writes it)."""
    if raw is None or raw.get("problems") is None:
        return normal
    problems = [{"type": p["type"], "title": p["title"], "detail": "", **p}
                for p in raw["problems"]]
    return {**normal, "problems": problems}


def normal_node_pool(raw: dict[str, Any]) -> dict[str, Any]:
    """A node pool with every field, normalised as part of a cluster would be."""
    return dict(normal_cluster({"id": "-", "node_pools": [raw]})["node_pools"][0])
