"""Pinned versus applied, per cluster (`clmgit status`)."""

from __future__ import annotations

from dataclasses import dataclass

from clmgit.model import DECOMMISSIONED, UPDATE_BLOCK, Cluster, desired_version
from clmgit.workspace import Workspace


@dataclass(frozen=True)
class ClusterState:
    id: str
    alias: str
    environment: str
    channel: str
    group: str
    pinned_sha: str | None
    applied_sha: str
    state: str  # in-sync, pending, updating, failed, blocked
    reason: str = ""


def cluster_state(ws: Workspace, cluster: Cluster) -> ClusterState:
    pinned, group_or_reason = ws.pinned_sha(cluster)
    group = group_or_reason if pinned else ""
    status = cluster.status
    reason = ""
    if UPDATE_BLOCK in cluster.config_items:
        state, reason = "blocked", f"{UPDATE_BLOCK}: {cluster.config_items[UPDATE_BLOCK]}"
    elif pinned is None:
        state, reason = "blocked", group_or_reason
    elif status.problems:
        state, reason = "failed", status.problems[-1].title
    elif status.next_version:
        state = "updating"
    elif status.current_version == desired_version(pinned, cluster):
        state = "in-sync"
    else:
        state = "pending"
    return ClusterState(
        id=cluster.id,
        alias=cluster.alias,
        environment=cluster.environment,
        channel=cluster.channel,
        group=group,
        pinned_sha=pinned,
        applied_sha=cluster.applied_sha,
        state=state,
        reason=reason,
    )


def fleet_status(ws: Workspace, channel: str | None = None) -> list[ClusterState]:
    """Every cluster that is not decommissioned, optionally of one channel."""
    if channel:
        ws.channel(channel)  # an unknown channel is an error, not an empty list
    return [
        cluster_state(ws, c)
        for c in ws.clusters
        if c.lifecycle_status != DECOMMISSIONED and (channel is None or c.channel == channel)
    ]
