"""The `healthy_in_source` gate: promote only what runs healthy.

Every running cluster of the source channel must run the version (or one containing it) with
no update under way and no problem, and have been observed healthy on that version, after its
apply, continuously for `stable_for` — from `healthy_since` to its latest observation, so a
verdict seen once proves nothing about the time after it. The verdicts are read from the
registry as it is when `promote` runs. Past `progress_deadline` after its apply a cluster that is
not healthy is `failed`, and the refusal says so. Up to `allow_unknown` clusters whose health is
`unknown` (unreachable, no data) may pass; they are named in the commit, as is every verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta

from clmgit.channels import Group
from clmgit.durations import format_duration
from clmgit.healthstate import (
    HEALTHY,
    UNKNOWN,
    HealthGate,
    Judgement,
    gate_for,
    healthy_for,
    judge,
)
from clmgit.model import Cluster
from clmgit.promotion.gates import (
    GROUPS_BEFORE,
    HEALTHY_IN_SOURCE,
    GateResult,
    Promotion,
    groups_before,
)
from clmgit.timestamps import parse_timestamp

#: At most this many clusters are named in a refusal, and listed in the commit.
NAMED = 10
LISTED = 50


def judge_in_source(p: Promotion, cluster: Cluster) -> Judgement:
    """The cluster's health for promoting `p.new`: its own verdict, once it runs that."""
    status = cluster.status
    deadline = gate_for(p.ws.channels.values(), cluster.channel).progress_deadline
    judged = judge(status, deadline=deadline, now=p.now)
    if judged.state in (HEALTHY, UNKNOWN) and not p.versions.has_applied(cluster, p.new):
        return Judgement("pending", (f"it has not applied {p.shown}",))
    if judged.state == HEALTHY and (status.next_version or status.problems):
        why = "it has problems" if status.problems else "an update is under way"
        return Judgement("pending", (why,))
    return judged


def check_healthy(p: Promotion) -> list[GateResult]:
    """Every running source cluster healthy on the new version for `stable_for`."""
    if p.target.gates.healthy_in_source is None:
        return []
    return [_healthy(p, p.target.gates.healthy_in_source)]


def _healthy(p: Promotion, gate: HealthGate) -> GateResult:
    clusters, now = p.source_clusters, p.now
    judged = [(c, judge_in_source(p, c)) for c in clusters]
    record = _record(judged, gate)
    if not clusters:
        return GateResult(HEALTHY_IN_SOURCE, (
            f"no running cluster of {p.source.name!r} can be healthy on {p.shown}: the channel "
            "has none, so this gate cannot pass (--force overrides)"), record)
    blocking = [(c, _why_not(j, gate, now)) for c, j in judged]
    blocking = [(c, why) for c, why in blocking if why]
    unknown = [c for c, j in judged if j.state == UNKNOWN]
    if len(unknown) > gate.allow_unknown:
        blocking += [(c, f"unknown: {j.first_reason}") for c, j in judged if j.state == UNKNOWN]
    if not blocking:
        return GateResult(HEALTHY_IN_SOURCE, None, record)
    named = "; ".join(f"{c.alias or c.id} {why}" for c, why in blocking[:NAMED])
    more = f"; and {len(blocking) - NAMED} more" if len(blocking) > NAMED else ""
    allowed = (f" ({len(unknown)} unknown, {gate.allow_unknown} allowed)"
               if unknown else "")
    return GateResult(HEALTHY_IN_SOURCE, (
        f"{len(blocking)} of {len(clusters)} clusters of {p.source.name!r} are not healthy on "
        f"{p.shown} for {format_duration(gate.stable_for)}{allowed}: {named}{more} "
        "(--force overrides)"), record)


def _why_not(judged: Judgement, gate: HealthGate, now: datetime) -> str:
    """Why a cluster holds the gate back ("" if it does not; unknown ones are counted apart)."""
    if judged.state == UNKNOWN:
        return ""
    if judged.state != HEALTHY:
        since = _ago(judged.since, now)
        return f"{judged.state}{since}: {judged.first_reason}" + (
            f" (+{len(judged.reasons) - 1} more)" if len(judged.reasons) > 1 else "")
    held = healthy_for(judged)
    if held >= gate.stable_for:
        return ""
    return (f"healthy for {format_duration(held)} of {format_duration(gate.stable_for)} "
            f"(last observed {judged.observed_at}; `clmgit health` observes again)")


def _ago(stamp: str, now: datetime) -> str:
    when = parse_timestamp(stamp)
    return f" for {format_duration(now - when)}" if when else ""


def _record(judged: Sequence[tuple[Cluster, Judgement]], gate: HealthGate) -> tuple[str, ...]:
    """The verdicts as the commit records them: a summary line, then one line per cluster
    (the summary is also the commit's `Clmgit-Health:` trailer)."""
    counts = Counter(j.state for _, j in judged)
    summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    unknown = [c.alias or c.id for c, j in judged if j.state == UNKNOWN]
    if unknown and len(unknown) <= gate.allow_unknown:
        summary += f" (allowed unknown: {', '.join(unknown)})"
    lines = [f"Health of the source clusters: {summary or 'no clusters'}"]
    for cluster, j in judged[:LISTED]:
        held = healthy_for(j)
        detail = (f"healthy for {format_duration(held)} since {j.since}"
                  if j.state == HEALTHY else f"{j.state}: {j.first_reason}")
        version = j.verdict.version.partition("#")[0][:7] if j.verdict else "-"
        lines.append(f"- {cluster.alias or cluster.id} @ {version}: {detail}")
    if len(judged) > LISTED:
        lines.append(f"- ... and {len(judged) - LISTED} more")
    return tuple(lines)


def check_groups_healthy(p: Promotion) -> list[GateResult]:
    """`groups_before: healthy`: the clusters of the groups before the promoted ones (the
    canary) run the new version healthy, for the `stable_for` of the channel's health gate if
    it has one. (Groups before promoted in the same step: gates.py:check_groups_before.)"""
    if p.target.gates.groups_before != "healthy" or not p.groups:
        return []
    together, clusters = groups_before(p)
    return [] if together else [_groups_healthy(p, clusters)]


def _groups_healthy(p: Promotion, clusters: Sequence[Cluster]) -> GateResult:
    gate = p.target.gates.healthy_in_source or HealthGate()
    judged = [(c, judge_in_source(p, c)) for c in clusters]
    blocking = [(c, _why_not(j, gate, p.now) or "unknown") for c, j in judged
                if _why_not(j, gate, p.now) or j.state == UNKNOWN]
    if not blocking:
        return GateResult(GROUPS_BEFORE, None)
    named = "; ".join(f"{c.alias or c.id} {why}" for c, why in blocking[:NAMED])
    target = p.target
    return GateResult(GROUPS_BEFORE, (
        f"{target.name!r} promotes a group only after the groups before it run {p.shown} "
        f"healthy; {len(blocking)} cluster(s) do not: {named} (--force overrides)"))


# --- for `status` ------------------------------------------------------------------------------


def status_health(cluster: Cluster, deadline: timedelta, now: datetime) -> Judgement:
    """The health column of `status`: the version it runs, judged now against the progress
    deadline of its channel (`gate_for`) ("" for a cluster that has applied nothing)."""
    if not cluster.status.current_version:
        return Judgement("")
    return judge(cluster.status, deadline=deadline, now=now)


def stuck(cluster: Cluster, group: Group | None, deadline: timedelta, state: str, reason: str,
          now: datetime) -> tuple[str, str]:
    """`stuck` for a cluster still pending or updating past its progress deadline after its
    group was pinned, with how long and why; else the state as it was."""
    pinned_at = parse_timestamp(group.promoted_at) if group else None
    if pinned_at is None or now <= pinned_at + deadline:
        return state, reason
    if cluster.status.problems:
        why = cluster.status.problems[-1].title
    elif state == "updating":
        why = f"the update to {cluster.status.next_version[:7]} has not finished"
    else:
        why = "no reconcile has started the update"
    return "stuck", (f"for {format_duration(now - pinned_at)} since its pin, deadline "
                     f"{format_duration(deadline)}: {why}")
