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
SOURCE = "source"
GROUPS_BEFORE = "groups_before"

#: The flag that lifts each gate's refusal; every other gate is lifted by --force.
_LIFTED_BY = {FREEZE: "--ignore-freeze", SOURCE: "--from-any"}


@dataclass(frozen=True)
class GateResult:
    gate: str  # one of the names above
    refusal: str | None  # None: passed
    #: Lines the promotion commit records about this gate (the health verdicts).
    record: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    refusals: tuple[str, ...]
    overrides: tuple[str, ...]  # "--force: <the refusal it lifted>"


def judge(results: Sequence[GateResult], *, force: bool, ignore_freeze: bool,
          from_any: bool = False) -> Verdict:
    """--ignore-freeze lifts the freeze only, --from-any the pipeline's order only; --force
    lifts every other gate."""
    given = {"--force": force, "--ignore-freeze": ignore_freeze, "--from-any": from_any}
    refusals: list[str] = []
    overrides: list[str] = []
    for r in results:
        if r.refusal is None:
            continue
        flag = _LIFTED_BY.get(r.gate, "--force")
        if given[flag]:
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


def check_source(source: Channel, target: Channel) -> GateResult:
    """Gates are judged in the source channel: promoting past the pipeline's order would judge
    them where the change never ran (`promote dev stable` while stable's source is beta)."""
    if target.source is None or target.source == source.name:
        return GateResult(SOURCE, None)
    return GateResult(SOURCE, (
        f"{target.name!r} is promoted from {target.source!r}, not {source.name!r}: its gates "
        f"would be judged where the change has not run (--from-any overrides)"
    ))


def check_groups_before(
    ws: Workspace, target: Channel, groups: Sequence[str], sha: str,
    now: datetime | None = None,
) -> GateResult:
    """`groups_before: applied`: every group promoted must have all the groups before it in
    the channel file (the canary first) running `sha` already; `healthy`: running it healthy
    (clmgit/promotion/health.py)."""
    if target.gates.groups_before not in ("applied", "healthy") or not groups:
        return GateResult(GROUPS_BEFORE, None)
    last = max(i for i, g in enumerate(target.groups) if g.name in groups)
    earlier = [g for g in target.groups[:last] if g.name not in groups]
    promoted_together = [g.name for g in target.groups[:last] if g.name in groups]
    clusters = [c for c in source_clusters(ws, target)
                if (group := target.group_for(c)) is not None and group in earlier]
    cache: dict[str, bool] = {}
    waiting = [c for c in clusters if not has_applied(ws, c, sha, cache)]
    if target.gates.groups_before == "healthy" and not promoted_together:
        from clmgit.promotion.health import check_groups_healthy

        return check_groups_healthy(ws, target, clusters, sha, now)
    return groups_before_result(target, promoted_together, waiting, sha[:7])


def groups_before_result(target: Channel, promoted_together: Sequence[str],
                         waiting: Sequence[Cluster], shown: str) -> GateResult:
    """The verdict of `groups_before`: groups before promoted in the same step, or clusters of
    them that have not applied `shown` (a short SHA or config version), refuse."""
    # Each refusal names the next step, which is not --force.
    if promoted_together:
        waiting_for = (f"group(s) {', '.join(promoted_together)} promoted in the same step; "
                       f"promote --group {promoted_together[0]} first, the rest once it has "
                       "applied")
    elif waiting:
        names = ", ".join(c.alias or c.id for c in waiting[:10])
        waiting_for = (f"{len(waiting)} cluster(s) of the groups before it have not: {names}; "
                       "promote again once reconcile has applied it there")
    else:
        return GateResult(GROUPS_BEFORE, None)
    return GateResult(GROUPS_BEFORE, (
        f"{target.name!r} promotes a group only after the groups before it applied "
        f"{shown}; {waiting_for} (--force overrides)"
    ))


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
            f"{sha[:7]}: {names}{more}; promote again once reconcile has applied it there "
            "(--force overrides)"
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
        if target.gates.healthy_in_source is not None:
            from clmgit.promotion.health import soak_start as healthy_start

            # With the health gate the soak clock starts when the source became healthy.
            start = healthy_start(clusters, ws, now) or now
        left = soak - (now - start)
        if left.total_seconds() > 0:
            refusal = (
                f"{sha[:7]} has soaked in {source.name!r} for {format_duration(now - start)} of "
                f"the {format_duration(soak)} that {target.name!r} requires; "
                f"{format_duration(left)} left (--force overrides)"
            )
    return GateResult(SOAK, refusal)


def check_all(
    ws: Workspace, *, source: Channel, target: Channel, sha: str, now: datetime,
    groups: Sequence[str] = (),
) -> list[GateResult]:
    results = [check_freeze(target), check_source(source, target),
               check_groups_before(ws, target, groups, sha, now)]
    healthy = target.gates.healthy_in_source is not None
    if target.gates.applied_in_source or target.gates.soak or healthy:
        clusters = source_clusters(ws, source)
        if target.gates.applied_in_source:
            results.append(check_applied(ws, source, sha, clusters))
        if healthy:
            from clmgit.promotion.health import check_healthy

            results.append(check_healthy(ws, target=target, source=source, sha=sha,
                                         clusters=clusters, now=now))
        if target.gates.soak:
            results.append(check_soak(ws, target, source, sha, clusters, now))
    return results
