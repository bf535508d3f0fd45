"""Rollback of a channel pinned in several config sources: every source of the selected groups
back in one commit of the channel file.

Without `--to` a group goes back to the most recent earlier pin map in the channel file's
history that is behind its current pins in every source (and not equal to them); `--to
source=sha` (repeatable) moves the named sources to those commits, the others staying where
they are. Each source's commit must be behind (an ancestor of) the group's current pin of that
source: moving forward is `promote`. Once every group is at the same pins, each source's
channel branch follows, as after a promotion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from clmgit.channels import Channel, Group, group_pins
from clmgit.errors import GitError, RefusedError
from clmgit.model import SHA_RE, config_version
from clmgit.promotion import gates
from clmgit.promotion.content import BranchMove
from clmgit.promotion.history import raw_pins_in_history
from clmgit.promotion.promote import GroupChange, Plan, group_members
from clmgit.promotion.sources import plan_source_moves, with_writes
from clmgit.timestamps import format_timestamp
from clmgit.workspace import Workspace


def plan_sources_rollback(ws: Workspace, *, channel: str, groups: Sequence[str] = (),
                          to: Mapping[str, str] | None = None, force: bool = False,
                          now: datetime) -> Plan:
    sources = ws.sources
    ch = ws.channel(channel)
    if not ch.groups:
        raise RefusedError(f"channel {ch.name!r} has no pinned groups to roll back")
    members = group_members(ws, ch)
    given = {n: _commit(ws, n, sha) for n, sha in (to or {}).items()}
    backs: dict[str, dict[str, str]] = {}
    olds: dict[str, dict[str, str]] = {}
    unchanged: list[str] = []
    for g in ch.select(groups):
        current = group_pins(g, sources)
        if current is None:
            raise RefusedError(f"group {g.name!r} of {ch.name!r} has no pin of every source "
                               "to roll back")
        back = {**current, **given} if given else _previous(ws, ch, g, current)
        if back is None:
            raise RefusedError(f"history has no earlier pins of group {g.name!r} of "
                               f"{ch.name!r}; pass --to SOURCE=SHA")
        _check_behind(ws, ch, g, current, back)
        if back == current:
            unchanged.append(g.name)
        else:
            backs[g.name], olds[g.name] = back, current
    if not backs:
        return Plan("rollback", ch.name, None, "", (), tuple(unchanged))
    changes = tuple(GroupChange(n, config_version(list(olds[n].items())),
                                config_version(list(b.items())), members[n])
                    for n, b in backs.items())
    first = next(iter(backs.values()))
    moves: list[tuple[str, BranchMove]] = []
    refused: list[gates.GateResult] = []
    if all((g.name in backs and backs[g.name] == first)
           or (g.name not in backs and group_pins(g, sources) == first) for g in ch.groups):
        moves, refused = plan_source_moves(
            ws, ch, first, {n: [o[n] for o in olds.values()] for n in first})
    verdict = gates.judge([gates.check_window(ch, now), *refused], force=force,
                          ignore_freeze=False)
    plan = Plan("rollback", ch.name, None, changes[0].new, changes, tuple(unchanged),
                verdict.overrides, refusals=verdict.refusals)
    pins = {n: {"sha": b, "promoted_at": format_timestamp(now), "promoted_from": "rollback"}
            for n, b in backs.items()}
    return with_writes(ws, plan, ch, pins, moves, message=_message(plan, olds, backs))


def _commit(ws: Workspace, source: str, sha: str) -> str:
    repo = ws.source_repos.repo(source)
    full = repo.object_id(sha)
    if full is None or repo.object_types([full]).get(full) != "commit":
        raise GitError(f"source {source!r}: commit {sha} does not exist in {repo.location}")
    return full


def _previous(ws: Workspace, ch: Channel, g: Group,
              current: Mapping[str, str]) -> dict[str, str] | None:
    """The most recent earlier pin map of the group behind its current pins in every source."""
    for raw in raw_pins_in_history(ws, ch, g):
        if not isinstance(raw, Mapping) or set(raw) != set(current):
            continue
        pins = {n: str(raw[n]) for n in current}
        if pins != dict(current) and all(_behind(ws, n, pins[n], current[n]) for n in pins):
            return pins
    return None


def _behind(ws: Workspace, source: str, old: str, new: str) -> bool:
    repo = ws.source_repos.repo(source)
    return bool(SHA_RE.match(old)) and repo.rev(old) is not None and repo.is_ancestor(old, new)


def _check_behind(ws: Workspace, ch: Channel, g: Group, current: Mapping[str, str],
                  back: Mapping[str, str]) -> None:
    for name, sha in back.items():
        if not _behind(ws, name, sha, current[name]):
            raise RefusedError(
                f"source {name!r}: {sha[:7]} is not behind group {g.name!r} of {ch.name!r} "
                f"(at {current[name][:7]}); moving forward is `clmgit promote`")


def _message(plan: Plan, olds: Mapping[str, Mapping[str, str]],
             backs: Mapping[str, Mapping[str, str]]) -> str:
    """Subject `rollback(<channel>): main a..b, addons c..d [<groups>]`."""
    groups = ",".join(c.group for c in plan.changes)
    first = plan.changes[0].group
    moves = ", ".join(f"{n} {olds[first][n][:7]}..{sha[:7]}" for n, sha in backs[first].items())
    lines = "\n".join(f"Roll back group {c.group} from {c.old} to {c.new}." for c in plan.changes)
    trailers = ["Clmgit-Action: rollback", f"Clmgit-Sha: {plan.sha}", f"Clmgit-Groups: {groups}",
                f"Clmgit-Clusters: {sum(c.clusters for c in plan.changes)}",
                "Clmgit-From: " + ",".join(f"{c.group}={c.old}" for c in plan.changes)]
    trailers += gates.override_trailers(plan.overrides)
    paragraphs = [f"rollback({plan.target}): {moves} [{groups}]", lines]
    if plan.overrides:
        paragraphs.append("Overrides:\n" + "\n".join(f"- {o}" for o in plan.overrides))
    paragraphs.append("\n".join(trailers))
    return "\n\n".join(paragraphs) + "\n"
