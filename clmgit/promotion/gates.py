"""Promotion gates (DESIGN.md §4.3): freeze, applied in the source channel, soak time.

Each gate either passes, or returns the sentence that says why it refuses. The caller decides
whether an override applies and records it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from clmgit.channels import Channel
from clmgit.durations import format_duration
from clmgit.model import DECOMMISSION_REQUESTED, DECOMMISSIONED, REQUESTED, Cluster
from clmgit.timestamps import parse_timestamp
from clmgit.workspace import Workspace

#: Clusters that are not (or no longer) running do not hold back a promotion.
INACTIVE = frozenset({REQUESTED, DECOMMISSION_REQUESTED, DECOMMISSIONED})


@dataclass(frozen=True)
class GateResult:
    gate: str  # "freeze", "applied_in_source", "soak"
    refusal: str | None  # None: passed


def check_freeze(target: Channel) -> GateResult:
    refusal = None
    if target.frozen:
        why = f": {target.freeze_reason}" if target.freeze_reason else ""
        refusal = f"channel {target.name!r} is frozen{why} (--ignore-freeze overrides)"
    return GateResult("freeze", refusal)


def source_clusters(ws: Workspace, source: Channel) -> list[Cluster]:
    return [
        c for c in ws.clusters if c.channel == source.name and c.lifecycle_status not in INACTIVE
    ]


def has_applied(ws: Workspace, cluster: Cluster, sha: str, cache: dict[str, bool]) -> bool:
    """A cluster has applied `sha` if its applied commit is `sha` or contains it."""
    applied = cluster.applied_sha
    if not applied:
        return False
    if applied not in cache:
        cache[applied] = ws.repo.rev(applied) is not None and ws.repo.is_ancestor(sha, applied)
    return cache[applied]


def check_applied(
    ws: Workspace, source: Channel, sha: str, clusters: Sequence[Cluster]
) -> GateResult:
    cache: dict[str, bool] = {}
    missing = [c for c in clusters if not has_applied(ws, c, sha, cache)]
    refusal = None
    if missing:
        names = ", ".join(c.alias or c.id for c in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        refusal = (
            f"{len(missing)} of {len(clusters)} clusters of {source.name!r} have not applied "
            f"{sha[:7]}: {names}{more} (--force overrides)"
        )
    return GateResult("applied_in_source", refusal)


def soak_start(ws: Workspace, source: Channel, sha: str, clusters: Sequence[Cluster]) -> datetime:
    """When `sha` landed in the source channel: the latest time a source cluster applied it, as
    the registry records; without records, when it was pinned there; else its commit time."""
    times = [parse_timestamp(c.status.applied_at) for c in clusters]
    known = [t for t in times if t is not None]
    if known and len(known) == len(times):
        return max(known)
    pinned = [parse_timestamp(g.promoted_at) for g in source.groups if g.sha == sha]
    candidates = known + [t for t in pinned if t is not None]
    if candidates:
        return max(candidates)
    start = parse_timestamp(ws.repo.commit_time(sha))
    assert start is not None
    return start


def check_soak(
    ws: Workspace,
    target: Channel,
    source: Channel,
    sha: str,
    clusters: Sequence[Cluster],
    now: datetime,
) -> GateResult:
    soak = target.gates.soak
    refusal = None
    if soak:
        start = soak_start(ws, source, sha, clusters)
        left = soak - (now - start)
        if left.total_seconds() > 0:
            refusal = (
                f"{sha[:7]} has soaked in {source.name!r} for {format_duration(now - start)} of "
                f"the {format_duration(soak)} that {target.name!r} requires; "
                f"{format_duration(left)} left (--force overrides)"
            )
    return GateResult("soak", refusal)


def check_all(
    ws: Workspace, *, source: Channel, target: Channel, sha: str, now: datetime
) -> list[GateResult]:
    results = [check_freeze(target)]
    if target.gates.applied_in_source or target.gates.soak:
        clusters = source_clusters(ws, source)
        if target.gates.applied_in_source:
            results.append(check_applied(ws, source, sha, clusters))
        if target.gates.soak:
            results.append(check_soak(ws, target, source, sha, clusters, now))
    return results
