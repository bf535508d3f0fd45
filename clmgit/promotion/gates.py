"""Promotion gates (DESIGN.md §4.3): freeze, applied in the source channel, soak time, and the
two that keep content safe: forward-only and the channel branch's own content.

Each gate either passes, or returns the sentence that says why it refuses. `judge` decides which
refusals an override (--force, --ignore-freeze) lifts; every lifted refusal is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from clmgit.adapters.git import GitRepo
from clmgit.channels import Channel
from clmgit.durations import format_duration
from clmgit.model import DECOMMISSION_REQUESTED, DECOMMISSIONED, REQUESTED, Cluster
from clmgit.promotion.content import contains
from clmgit.timestamps import parse_timestamp
from clmgit.workspace import Workspace

#: Clusters that are not (or no longer) running do not hold back a promotion.
INACTIVE = frozenset({REQUESTED, DECOMMISSION_REQUESTED, DECOMMISSIONED})


FREEZE = "freeze"
APPLIED = "applied_in_source"
SOAK = "soak"
FORWARD = "forward_only"
BRANCH_CONTENT = "branch_content"


@dataclass(frozen=True)
class GateResult:
    gate: str  # one of the names above
    refusal: str | None  # None: passed


@dataclass(frozen=True)
class Verdict:
    refusals: tuple[str, ...]
    overrides: tuple[str, ...]  # "--force: <the refusal it lifted>"


def judge(results: Sequence[GateResult], *, force: bool, ignore_freeze: bool) -> Verdict:
    """--ignore-freeze lifts the freeze only; --force lifts every other gate."""
    refusals: list[str] = []
    overrides: list[str] = []
    for r in results:
        if r.refusal is None:
            continue
        flag = "--ignore-freeze" if r.gate == FREEZE else "--force"
        if (ignore_freeze if r.gate == FREEZE else force):
            overrides.append(f"{flag}: {r.refusal}")
        else:
            refusals.append(r.refusal)
    return Verdict(tuple(dict.fromkeys(refusals)), tuple(dict.fromkeys(overrides)))


def check_forward(
    repo: GitRepo, target: Channel, pins: Sequence[tuple[str, str]], sha: str
) -> GateResult:
    """Every current pin (group, SHA) of the target must be contained in the new SHA."""
    behind = [(group, old) for group, old in pins if not contains(repo, old, sha)]
    refusal = None
    if behind:
        where = "" if target.pinned else f", the head of branch {target.branch!r}"
        at = ", ".join(f"{group} at {old[:7]}{where}" for group, old in behind)
        refusal = (
            f"{sha[:7]} does not contain the pins of {target.name!r} ({at}); promotion only "
            "moves forward (use rollback, or --force)"
        )
    return GateResult(FORWARD, refusal)


def check_freeze(target: Channel) -> GateResult:
    refusal = None
    if target.frozen:
        why = f": {target.freeze_reason}" if target.freeze_reason else ""
        refusal = f"channel {target.name!r} is frozen{why} (--ignore-freeze overrides)"
    return GateResult(FREEZE, refusal)


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
    if not clusters:
        return GateResult(APPLIED, (
            f"no running cluster of {source.name!r} can have applied {sha[:7]}: the channel "
            "has none, so this gate cannot pass (--force overrides)"
        ))
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
    return GateResult(APPLIED, refusal)


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
    return GateResult(SOAK, refusal)


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
