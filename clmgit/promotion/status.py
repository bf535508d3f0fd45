"""Pinned versus applied, per cluster and per group (`clmgit status`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta

from clmgit import timestamps
from clmgit.channels import Channel, Group, maintenance_window, selector_matches
from clmgit.errors import ClmgitError, ConfigError
from clmgit.healthstate import STATES as HEALTH_STATES
from clmgit.healthstate import gate_for
from clmgit.model import (
    DECOMMISSION_REQUESTED,
    DECOMMISSIONED,
    SELECTOR_FIELDS,
    UPDATE_BLOCK,
    Cluster,
    desired_version,
    is_selector_key,
)
from clmgit.promotion.health import status_health, stuck
from clmgit.windows import until
from clmgit.workspace import Workspace

#: The states a cluster can be in, in the order the summary lists them. `stuck`: pending or
#: updating past its progress deadline after the pin moved (clmgit/promotion/health.py).
STATES = ("in-sync", "pending", "updating", "stuck", "failed", "blocked", "decommission")


@dataclass(frozen=True)
class ClusterState:
    id: str
    alias: str
    environment: str
    channel: str
    group: str
    pinned_sha: str | None
    applied_sha: str
    state: str  # one of STATES
    reason: str = ""
    lifecycle: str = ""
    #: The health of the version it runs (clmgit/healthstate.py), since when, and why.
    health: str = ""
    health_since: str = ""
    health_reason: str = ""


_new = object.__new__


class _Judge:
    """The state of each cluster at one instant. What clusters share is worked out once per
    run, not once per cluster: the progress deadline of each channel (a fleet has a few
    channels and thousands of clusters)."""

    def __init__(self, ws: Workspace, now: datetime) -> None:
        self.ws, self.now = ws, now
        self._deadlines: dict[str, timedelta] = {}

    def deadline(self, channel: str) -> timedelta:
        try:
            return self._deadlines[channel]
        except KeyError:
            found = gate_for(self.ws.channels.values(), channel).progress_deadline
            return self._deadlines.setdefault(channel, found)

    def state(self, cluster: Cluster) -> ClusterState:
        ws, now = self.ws, self.now
        pinned, group_or_reason = ws.pinned_sha(cluster)
        state, reason = _state(cluster, pinned, group_or_reason)
        deadline = self.deadline(cluster.channel)
        if state in ("pending", "updating") and pinned:
            group = _group(ws, cluster, group_or_reason)
            state, reason = stuck(cluster, group, deadline, state, reason, now)
        if state == "pending":
            reason = reason or _waiting(ws, cluster, now)
        health = status_health(cluster, deadline, now)
        # Built as its fields' dict, in their order: a frozen dataclass's __init__ sets each
        # field through object.__setattr__, two thirds of the cost of a row at 10,000 rows.
        row: ClusterState = _new(ClusterState)
        row.__dict__.update(
            id=cluster.id,
            alias=cluster.alias,
            environment=cluster.environment,
            channel=cluster.channel,
            group=group_or_reason if pinned else _group_name(ws, cluster),
            pinned_sha=pinned,
            applied_sha=cluster.applied_sha,
            state=state,
            reason=reason,
            lifecycle=cluster.lifecycle_status,
            health=health.state,
            health_since=health.since,
            health_reason=health.first_reason,
        )
        return row


def _group(ws: Workspace, cluster: Cluster, name: str) -> Group | None:
    """The group a pinned cluster is in, by the name its pin came with (a channel without
    groups: none)."""
    channel = ws.channels.get(cluster.channel)
    return next((g for g in channel.groups if g.name == name), None) if channel else None


def _waiting(ws: Workspace, cluster: Cluster, now: datetime) -> str:
    """Why a pending cluster waits: its maintenance window is closed (as reconcile judges)."""
    try:
        window = maintenance_window(ws.channels, cluster)
    except ConfigError as e:
        return str(e)
    closed = until(window, now) if window is not None else ""
    return f"waiting: its maintenance window is {closed}" if closed else ""


def _group_name(ws: Workspace, cluster: Cluster) -> str:
    """The group a cluster belongs to even while that group has no pin ("" if none)."""
    channel = ws.channels.get(cluster.channel)
    group = channel.group_for(cluster) if channel else None
    return group.name if group else ""


def _state(cluster: Cluster, pinned: str | None, group_or_reason: str) -> tuple[str, str]:
    """The state as the next reconcile sees it (reconcile/plan.py decides in the same order):
    a requested decommission comes first, since it is the most destructive thing pending."""
    status = cluster.status
    if cluster.lifecycle_status == DECOMMISSION_REQUESTED:
        return "decommission", "the next reconcile deletes its stacks"
    if UPDATE_BLOCK in cluster.config_items:
        return "blocked", f"{UPDATE_BLOCK}: {cluster.config_items[UPDATE_BLOCK]}"
    if pinned is None:
        return "blocked", group_or_reason
    if status.problems:
        return "failed", status.problems[-1].title
    if status.next_version:
        return "updating", ""
    if status.current_version == desired_version(pinned, cluster):
        return "in-sync", ""
    return "pending", ""


@dataclass(frozen=True)
class Filter:
    """Which clusters `status` shows: all given conditions hold."""

    channel: str | None = None
    group: str | None = None
    states: frozenset[str] = frozenset()
    #: Health states of the version a cluster runs (clmgit/healthstate.py).
    health: frozenset[str] = frozenset()
    #: Selector keys as in a channel file's groups (`environment`, `config_items.<key>`, ...)
    #: with shell-style globs.
    labels: Mapping[str, str] = field(default_factory=dict)


def fleet_status(ws: Workspace, channel: str | None = None, *,
                 where: Filter | None = None, now: datetime | None = None
                 ) -> list[ClusterState]:
    """Every cluster that is not decommissioned, narrowed by `where` (or just `channel`)."""
    where = where or Filter(channel=channel)
    _check_filter(ws, where)
    clusters = [
        c for c in ws.clusters
        if c.lifecycle_status != DECOMMISSIONED
        and (where.channel is None or c.channel == where.channel)
        and selector_matches(where.labels, c)
    ]
    judge = _Judge(ws, now or timestamps.now())
    states = [judge.state(c) for c in clusters]
    return [s for s in states
            if (where.group is None or s.group == where.group)
            and (not where.states or s.state in where.states)
            and (not where.health or s.health in where.health)]


def _check_filter(ws: Workspace, where: Filter) -> None:
    """A typo in a filter is an error, not an empty table that looks like a healthy fleet."""
    if where.channel:
        ws.channel(where.channel)
    if where.group:
        channels = [ws.channel(where.channel)] if where.channel else ws.channels.values()
        if not any(g.name == where.group for ch in channels for g in ch.groups):
            known = sorted({g.name for ch in channels for g in ch.groups}) or ["none"]
            raise ConfigError(f"no group {where.group!r} (groups: {', '.join(known)})")
    unknown = sorted(where.states - set(STATES))
    if unknown:
        raise ConfigError(f"no state {unknown[0]!r} (states: {', '.join(STATES)})")
    unknown = sorted(where.health - set(HEALTH_STATES))
    if unknown:
        raise ConfigError(f"no health state {unknown[0]!r} "
                          f"(health states: {', '.join(HEALTH_STATES)})")
    for key in where.labels:
        if not is_selector_key(key):
            raise ConfigError(f"-l {key}=...: a cluster has no field {key!r} (fields: "
                              f"{', '.join(sorted(SELECTOR_FIELDS))}, config_items.<key>)")


def sort_states(states: Sequence[ClusterState], key: str) -> list[ClusterState]:
    """`--sort-by KEY`: a column of the table (pinned/applied sort by SHA)."""
    names = {f.name for f in fields(ClusterState)} | {"pinned", "applied"}
    if key not in names:
        raise ConfigError(f"cannot sort by {key!r} (columns: {', '.join(sorted(names))})")
    attribute = {"pinned": "pinned_sha", "applied": "applied_sha"}.get(key, key)
    return sorted(states, key=lambda s: str(getattr(s, attribute) or ""))


def state_counts(states: Sequence[ClusterState]) -> dict[str, int]:
    """Clusters per state, in STATES order, states with no cluster left out."""
    counts = Counter(s.state for s in states)
    return {state: counts[state] for state in STATES if counts[state]}


def health_counts(states: Sequence[ClusterState]) -> dict[str, int]:
    """Clusters per health state, in clmgit/healthstate.py's order; no verdict left out."""
    counts = Counter(s.health for s in states)
    return {state: counts[state] for state in HEALTH_STATES if counts[state]}


@dataclass(frozen=True)
class GroupRow:
    """One group of one channel (`status --by group`): where it is pinned, how its clusters
    are doing, and whether a promotion into it would pass its gates now."""

    channel: str
    group: str
    pinned_sha: str | None
    clusters: int
    states: dict[str, int]
    frozen: bool
    freeze_reason: str
    source: str | None
    next_sha: str | None  # what `promote SOURCE CHANNEL --group GROUP` would pin
    gate: str  # open, up to date, refused, no source, or error
    refusals: tuple[str, ...] = ()  # why, when refused (or the error)
    #: "closed until <ISO 8601>" while the channel's promotion windows are closed; else "".
    window: str = ""


def window_state(ch: Channel) -> str:
    """`closed until …` while no promotion window of the channel is open; "" otherwise."""
    from clmgit.windows import until

    return until(ch.windows, timestamps.now()) if ch.windows else ""


def group_rollup(ws: Workspace, states: Sequence[ClusterState]) -> list[GroupRow]:
    """A row per group of each channel, in promotion order; a channel without groups is one
    row named after the branch it follows."""
    from clmgit.channels import DEFAULT_GROUP

    by_group: dict[tuple[str, str], list[ClusterState]] = {}
    for s in states:
        by_group.setdefault((s.channel, s.group or DEFAULT_GROUP), []).append(s)
    rows = []
    for ch in ws.channels.values():
        names = [g.name for g in ch.groups] or [DEFAULT_GROUP]
        for name in names:
            members = by_group.get((ch.name, name), [])
            pins = ch.pins_of(ch.group(name)) if ch.groups else ws.versions.head(ch)
            pinned = ws.versions.version(pins) if pins else None
            next_sha, gate, why = _gate(ws, ch, name if ch.groups else None)
            rows.append(GroupRow(ch.name, name, pinned, len(members), state_counts(members),
                                 ch.frozen, ch.freeze_reason, ch.source, next_sha, gate, why,
                                 window_state(ch)))
    return rows


def _gate(ws: Workspace, ch: Channel,
          group: str | None) -> tuple[str | None, str, tuple[str, ...]]:
    """What a promotion from the channel's source would do now, judged as `promote --dry-run`
    judges it (the same planner, so the two never disagree)."""
    from clmgit.promotion.promote import plan_promotion

    if not ch.source:
        return None, "no source", ()
    try:
        plan = plan_promotion(ws, source=ch.source, target=ch.name,
                              groups=(group,) if group else ())
    except ClmgitError as e:
        return None, "error", (str(e),)
    if plan.refusals:
        return plan.sha, "refused", plan.refusals
    return plan.sha, "open" if plan.changes else "up to date", ()
