"""Normalisation and checking of records: every stored record has every field, in one order,
and passes the rules clmgit's client reads it by. Bodies arrive here already checked against
`models` (types, patterns, bounds); what is left goes through the client's own code, so that
what the server accepts the client reads back: the domain model parses it as CLM reads a record
(a missing string field is "", no parse defaults), `registry.records.check_record` holds it to
CLM's acceptance rules (400 with CLM's reason), and `registry.records.check_names` to
clmgit's safety rules against the records it could clash with (409).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clmgit.errors import ConfigError, RegistryError
from clmgit.model import Cluster, cluster_to_dict, parse_cluster
from clmgit.registry.records import check_names, check_record
from clmgit.registry.server.problems import bad_request, conflict

#: How the checks name a record that came in a request.
BODY = "the body"

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
def normal_cluster(raw: dict[str, Any]) -> dict[str, Any]:
    """Every field, in the model's order, of a record CLM accepts (else a 400 with CLM's
    reason), the problems of its status as sent (`_keep_problems`)."""
    cluster = _parse(raw)
    try:
        check_record(cluster, BODY)
    except RegistryError as e:
        raise bad_request(str(e)) from None
    full = cluster_to_dict(cluster)
    full["status"] = _keep_problems(full["status"], raw.get("status"))
    return full


def check_clashes(record: dict[str, Any], others: Iterable[dict[str, Any]]) -> None:
    """A 409 if `record` shares an id, alias, account and local id, or API server with one of
    `others` (stored records), or its alias is one of their ids or theirs its id: the client
    would refuse the whole registry. The caller picks `others` as the stored records that could
    clash."""
    clusters = [_parse(other) for other in others]
    try:
        check_names([*clusters, _parse(record)], "the registry")
    except RegistryError as e:
        raise conflict(str(e)) from None


def _parse(raw: dict[str, Any]) -> Cluster:
    try:
        return parse_cluster(raw, BODY)
    except ConfigError as e:
        raise bad_request(str(e)) from None


def _keep_problems(normal: dict[str, Any], raw: dict[str, Any] | None) -> dict[str, Any]:
    """A normalised status with the problems as sent, every member kept (detail defaults to
    an empty string, as the model writes it)."""
    if raw is None or raw.get("problems") is None:
        return normal
    problems = [{"type": p["type"], "title": p["title"], "detail": "", **p}
                for p in raw["problems"]]
    return {**normal, "problems": problems}


def normal_node_pool(raw: dict[str, Any]) -> dict[str, Any]:
    """A node pool with every field, normalised as part of a cluster would be (its cluster is
    checked as a whole when it is saved)."""
    return dict(cluster_to_dict(_parse({"id": "-", "node_pools": [raw]}))["node_pools"][0])
