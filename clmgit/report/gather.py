"""What the report shows, gathered from the functions behind `status` (states and the group
rollup with its gate verdicts), `history` and the promotion gates; nothing is judged twice."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from clmgit import timestamps
from clmgit.channels import DEFAULT_GROUP, Channel
from clmgit.durations import format_duration
from clmgit.model import Cluster
from clmgit.promotion import gates
from clmgit.promotion.history import history
from clmgit.promotion.status import (
    ClusterState,
    GroupRow,
    fleet_status,
    group_rollup,
    health_counts,
    state_counts,
)
from clmgit.redact import redact
from clmgit.report.forge import commit_url
from clmgit.report.matrix import matrix
from clmgit.report.model import ChannelView, ClusterRow, GroupView, Report
from clmgit.timestamps import format_timestamp
from clmgit.windows import until
from clmgit.workspace import Workspace

#: How many changes to cluster/ the matrix shows, and how many history entries.
CHANGES = 20
HISTORY = 50


def gather(ws: Workspace, *, changes: int = CHANGES, history_limit: int = HISTORY,
           now: datetime | None = None) -> Report:
    """The report of the workspace's fleet as it is now."""
    now = now or timestamps.now().replace(microsecond=0)
    states = fleet_status(ws)
    rows = group_rollup(ws, states)
    health = _group_health(states)
    channels = tuple(
        ChannelView(ch.name, ch.branch, ch.source, ch.pinned, ch.frozen, ch.freeze_reason,
                    tuple(_group_view(ws, now, ch, r, health.get((ch.name, r.group)))
                          for r in rows if r.channel == ch.name),
                    window=until(ch.windows, now) if ch.windows else "")
        for ch in ws.channels.values()
    )
    records = {c.id: c for c in ws.clusters}
    entries = tuple(history(ws, limit=history_limit))
    columns, matrix_rows = matrix(ws, rows, states, limit=changes)
    return Report(
        generated_at=format_timestamp(now),
        repository=redact(ws.url) if ws.url else ws.location,  # a URL may carry a token
        control_branch=ws.control_branch,
        control_sha=ws.control_sha,
        commit_url=commit_url(ws),
        channels=channels,
        columns=columns,
        changes=matrix_rows,
        clusters=tuple(_cluster_row(s, records[s.id]) for s in states),
        states=state_counts(states),
        history=entries,
        override_reasons={e.commit: _override_reasons(ws, e.commit)
                          for e in entries if e.overrides},
    )


def _override_reasons(ws: Workspace, commit: str) -> tuple[str, ...]:
    """The refusals an override lifted, as its commit message lists them under "Overrides:"
    (promote.py's commit_message; sync-branches writes the same "--force: ..." lines)."""
    body = ws.repo.log(commit, limit=1)[0].body
    return tuple(line.removeprefix("- ") for line in body.splitlines()
                 if line.removeprefix("- ").startswith("--"))


def _cluster_row(s: ClusterState, record: Cluster) -> ClusterRow:
    return ClusterRow(
        id=s.id, alias=s.alias, environment=s.environment, channel=s.channel,
        group=s.group, desired_sha=s.pinned_sha, applied_sha=s.applied_sha, state=s.state,
        reason=s.reason, applied_at=record.status.applied_at,
        problems=tuple(p.title for p in record.status.problems),
        health=(s.health + (f": {s.health_reason}" if s.health_reason else "")) or None,
    )


def _group_health(states: Sequence[ClusterState]) -> dict[tuple[str, str], str]:
    """`2 healthy, 1 unhealthy` per (channel, group) with any health known, as `status` counts
    it; a group whose clusters have no verdict is left out (shown as absent)."""
    members: dict[tuple[str, str], list[ClusterState]] = {}
    for s in states:
        members.setdefault((s.channel, s.group or DEFAULT_GROUP), []).append(s)
    counted = {key: health_counts(group) for key, group in members.items()}
    return {key: ", ".join(f"{n} {state}" for state, n in counts.items())
            for key, counts in counted.items() if counts}


def _group_view(ws: Workspace, now: datetime, ch: Channel, row: GroupRow,
                health: str | None) -> GroupView:
    """The pipeline's view of a group: the planner's verdict (from `group_rollup`) with the
    figures behind the applied-in-source and soak gates, asked of the versions port."""
    source = ws.channels.get(ch.source) if ch.source else None
    versions = ws.versions
    nxt = versions.pins(row.next_sha)
    clusters = gates.source_clusters(ws, source) if source and nxt else []
    applied_in_source = soak_left = None
    if source and nxt and ch.gates.applied_in_source:
        applied_in_source = (sum(versions.has_applied(c, nxt) for c in clusters), len(clusters))
    if source and nxt and ch.gates.soak:
        start = gates.soak_start(ws, source, nxt, clusters)
        soak_left = format_duration(ch.gates.soak - (now - start))
    return GroupView(
        name=row.group if ch.groups else DEFAULT_GROUP, pinned_sha=row.pinned_sha,
        promoted_at=ch.group(row.group).promoted_at if ch.groups else "",
        clusters=row.clusters, states=row.states, next_sha=row.next_sha, gate=row.gate,
        refusals=row.refusals,
        behind=versions.count(versions.pins(row.pinned_sha), nxt) if nxt else None,
        applied_in_source=applied_in_source, soak_left=soak_left, health=health,
    )
