"""Promotion and rollback (DESIGN.md §4): a plan is computed and checked first, then landed.

`plan_promotion` and `plan_rollback` read only. They refuse bad input with one sentence, and
otherwise return a `Plan` holding the new channel file, the commit message, the channel-branch
move and the refusals of any gate no override lifts (forward-only and the branch's own content
are gates too, see gates.py). `check` turns a refused plan into its sentence; `land_plan` writes
an allowed one. A dry run is a plan that is printed (refused or not) and never landed.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from clmgit import timestamps
from clmgit.adapters.git import SHORT_SHA_RE
from clmgit.channels import DEFAULT_GROUP, Channel, pin_groups
from clmgit.errors import ConfigError, GitError, RefusedError
from clmgit.promotion import gates
from clmgit.promotion.content import (
    CONFIG_DIR,
    BranchMove,
    PlannedMove,
    plan_branch_move,
    same_content,
)
from clmgit.promotion.history import previous_pin
from clmgit.promotion.write import Landed, land
from clmgit.timestamps import format_timestamp
from clmgit.workspace import Workspace

if TYPE_CHECKING:
    from clmgit.promotion.sources import SourceMove  # which imports this module

SHORTLOG_LIMIT = 50


@dataclass(frozen=True)
class GroupChange:
    group: str
    old: str | None
    new: str
    clusters: int = 0  # how many running clusters the change moves


class PlanKind(enum.Enum):
    NOTHING_TO_DO = "nothing-to-do"  # every selected group is at the SHA already
    PIN = "pin"  # groups get new pins
    REFUSED = "refused"  # a gate refuses; the plan is shown (dry run) but never landed


@dataclass(frozen=True)
class Plan:
    action: str  # "promote" or "rollback"
    target: str
    source: str | None
    sha: str
    changes: tuple[GroupChange, ...]
    unchanged: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()  # shortlog lines of what the change brings to cluster/
    move: BranchMove | None = None
    files: dict[str, str] = field(default_factory=dict)
    message: str = ""
    refusals: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # what the plan does that is easy to miss
    #: Branch moves in the repositories of other config sources (promotion/sources.py).
    source_moves: tuple[SourceMove, ...] = ()
    #: What gates record in the commit (the health verdicts of the source clusters).
    records: tuple[str, ...] = ()

    @property
    def kind(self) -> PlanKind:
        if self.refusals:
            return PlanKind.REFUSED
        return PlanKind.PIN if self.changes else PlanKind.NOTHING_TO_DO

    @property
    def nothing_to_do(self) -> bool:
        return self.kind is PlanKind.NOTHING_TO_DO


def check(plan: Plan) -> Plan:
    """The plan itself, or the refusal of it as one sentence."""
    if plan.refusals:
        verb = "promotion" if plan.action == "promote" else "rollback"
        raise RefusedError(
            f"{verb} of {plan.sha[:7]} to {plan.target!r} refused: " + "; ".join(plan.refusals)
        )
    return plan


def _now() -> datetime:
    return timestamps.now().replace(microsecond=0)


def resolve_commit(ws: Workspace, ref: str) -> str:
    """The full id of the commit `ref` abbreviates. A tag's id is refused, not peeled: a pin
    names a commit, and the user should see which one they are pinning."""
    if not SHORT_SHA_RE.match(ref):
        raise ConfigError(f"{ref!r} is not a commit SHA")
    oid = ws.repo.object_id(ref)
    kind = ws.repo.object_types([oid])[oid] if oid else None
    if oid is None or kind is None:
        raise GitError(f"commit {ref} does not exist in {ws.repo.location}")
    if kind != "commit":
        raise ConfigError(
            f"{ref} is {ws.repo.describe_object(oid, kind)}, not a commit; pass the commit id"
        )
    return oid


def source_sha(ws: Workspace, source: Channel, sha: str | None) -> str:
    """DESIGN.md §4.1: `--sha`, else the SHA the source's pinned groups agree on, else its head."""
    head = ws.head(source)
    if sha:
        resolved = resolve_commit(ws, sha)
        if not ws.repo.is_ancestor(resolved, head):
            raise RefusedError(
                f"{sha} is not on branch {source.branch!r} of channel {source.name!r}"
            )
        return resolved
    pinned = [g for g in source.groups if g.sha]
    if not pinned:
        return head
    shas = {g.sha for g in pinned}
    if len(shas) > 1:
        listing = ", ".join(f"{g.name} at {g.sha[:7]}" for g in pinned if g.sha)
        raise RefusedError(
            f"the groups of {source.name!r} are at different SHAs ({listing}); "
            "choose one with --sha"
        )
    (only,) = shas
    assert only is not None
    return only


def plan_promotion(
    ws: Workspace,
    *,
    source: str,
    target: str,
    groups: Sequence[str] = (),
    sha: str | None = None,
    force: bool = False,
    ignore_freeze: bool = False,
    from_any: bool = False,
    now: datetime | None = None,
) -> Plan:
    now = now or _now()
    src, dst = ws.channel(source), ws.channel(target)
    if src.name == dst.name:
        raise ConfigError("source and target are the same channel")
    new = source_sha(ws, src, sha)
    if groups and not dst.groups:
        dst.group(groups[0])  # raises: the channel has no groups
    notes: tuple[str, ...] = ()
    if dst.groups:
        selected = [(g.name, g.sha) for g in dst.select(groups)]
    else:
        # A channel that follows its branch is, in effect, pinned at the branch head.
        head = ws.head(dst)
        if same_content(ws.repo, head, new):
            return Plan("promote", dst.name, src.name, new, (), (DEFAULT_GROUP,))
        selected = [(DEFAULT_GROUP, head)]
        notes = (
            f"{dst.name!r} follows branch {dst.branch!r} today; this promotion pins it (group "
            f"{DEFAULT_GROUP!r}), and its clusters then follow the pin, not the branch",
        )
    members = group_members(ws, dst)
    changes = tuple(GroupChange(name, old, new, members[name])
                    for name, old in selected if old != new)
    unchanged = tuple(name for name, old in selected if old == new)
    if not changes:
        return Plan("promote", dst.name, src.name, new, (), unchanged)

    olds = [c.old for c in changes if c.old]
    results = gates.check_all(ws, source=src, target=dst, sha=new, now=now,
                              groups=[c.group for c in changes] if dst.groups else ())
    results.append(gates.check_forward(
        ws.repo, dst, [(c.group, c.old) for c in changes if c.old], new))
    results.append(gates.check_signed(ws, dst, new, olds))
    planned = _branch_move(ws, dst, {c.group: new for c in changes}, new,
                           known=olds if dst.groups else ())
    results.append(gates.GateResult(gates.BRANCH_CONTENT, planned.refusal))
    verdict = gates.judge(results, force=force, ignore_freeze=ignore_freeze, from_any=from_any)

    promoted_at = format_timestamp(now)
    pins = {
        c.group: {"sha": new, "promoted_at": promoted_at, "promoted_from": src.name}
        for c in changes
    }
    commits = _shortlog(ws, changes, new)
    plan = Plan(
        "promote", dst.name, src.name, new, changes, unchanged, verdict.overrides, commits,
        planned.taken(), refusals=verdict.refusals, notes=notes,
        records=tuple(line for r in results for line in r.record),
    )
    return _with_commit(ws, plan, dst, pins)


def plan_rollback(
    ws: Workspace,
    *,
    channel: str,
    groups: Sequence[str] = (),
    to: str | None = None,
    force: bool = False,
    now: datetime | None = None,
) -> Plan:
    now = now or _now()
    ch = ws.channel(channel)
    if not ch.groups:
        raise RefusedError(f"channel {ch.name!r} has no pinned groups to roll back")
    target_sha = resolve_commit(ws, to) if to else None
    changes: list[GroupChange] = []
    unchanged: list[str] = []
    members = group_members(ws, ch)
    for g in ch.select(groups):
        if g.sha is None:
            raise RefusedError(f"group {g.name!r} of {ch.name!r} has no pin to roll back")
        back = target_sha or previous_pin(ws, ch, g)
        if back is None:
            raise RefusedError(
                f"history has no earlier pin of group {g.name!r} of {ch.name!r}; pass --to SHA"
            )
        if back == g.sha:
            unchanged.append(g.name)
        elif not ws.repo.is_ancestor(back, g.sha):
            raise RefusedError(
                f"{back[:7]} is not behind group {g.name!r} of {ch.name!r} (at {g.sha[:7]}); "
                "moving forward is `clmgit promote`"
            )
        else:
            changes.append(GroupChange(g.name, g.sha, back, members[g.name]))
    sha = changes[0].new if changes else (target_sha or "")
    if not changes:
        return Plan("rollback", ch.name, None, sha, (), tuple(unchanged))
    pins = {
        c.group: {"sha": c.new, "promoted_at": format_timestamp(now), "promoted_from": "rollback"}
        for c in changes
    }
    new_pins = {c.group: c.new for c in changes}
    planned = _branch_move(ws, ch, new_pins, sha, known=[c.old for c in changes if c.old])
    verdict = gates.judge([gates.check_window(ch, now),
                           gates.GateResult(gates.BRANCH_CONTENT, planned.refusal)],
                          force=force, ignore_freeze=False)
    plan = Plan("rollback", ch.name, None, sha, tuple(changes), tuple(unchanged),
                verdict.overrides, (), planned.taken(), refusals=verdict.refusals)
    return _with_commit(ws, plan, ch, pins)


def group_members(ws: Workspace, ch: Channel) -> Counter[str]:
    """Running clusters of the channel per group (a channel without groups: all in one)."""
    counts: Counter[str] = Counter()
    for cluster in ws.clusters:
        if cluster.channel != ch.name or cluster.lifecycle_status in gates.INACTIVE:
            continue
        group = ch.group_for(cluster) if ch.groups else None
        if group or not ch.groups:
            counts[group.name if group else DEFAULT_GROUP] += 1
    return counts


def _branch_move(
    ws: Workspace, ch: Channel, new_pins: dict[str, str], sha: str, *, known: Sequence[str]
) -> PlannedMove:
    """The channel branch follows once every group of the channel is at the same SHA."""
    after = {g.name: new_pins.get(g.name, g.sha) for g in ch.groups} or new_pins
    if set(after.values()) != {sha}:
        return PlannedMove(None)
    return plan_branch_move(ws.repo, ch.branch, ws.branch_head(ch.branch), sha, known=known)


def _shortlog(ws: Workspace, changes: Sequence[GroupChange], new: str) -> tuple[str, ...]:
    bases = {c.old for c in changes if c.old and ws.repo.is_ancestor(c.old, new)}
    if not bases:
        return ()
    rev_range = [new, *(f"^{b}" for b in bases)]
    log = ws.repo.log(rev_range, paths=[CONFIG_DIR], limit=SHORTLOG_LIMIT + 1)
    lines = [f"{c.sha[:7]} {c.subject} ({c.author})" for c in log[:SHORTLOG_LIMIT]]
    if len(log) > SHORTLOG_LIMIT:
        total = ws.repo.count(rev_range, paths=[CONFIG_DIR])
        lines.append(f"... and {total - SHORTLOG_LIMIT} more")
    return tuple(lines)


def _with_commit(ws: Workspace, plan: Plan, ch: Channel, pins: dict[str, dict[str, str]]) -> Plan:
    text = pin_groups(ws.channel_text(ch), ch, pins)
    return replace(plan, files={ch.path: text}, message=commit_message(plan))


def commit_message(plan: Plan) -> str:
    groups = ",".join(c.group for c in plan.changes)
    old = plan.changes[0].old
    old7 = old[:7] if old else "none"
    if plan.action == "promote":
        subject = f"promote({plan.target}): {plan.source} {old7}..{plan.sha[:7]} [{groups}]"
    else:
        subject = f"rollback({plan.target}): {old7}..{plan.sha[:7]} [{groups}]"
    paragraphs = [subject]
    if plan.action == "rollback":
        paragraphs.append(
            "\n".join(f"Roll back group {c.group} from {c.old} to {c.new}." for c in plan.changes)
        )
    if plan.commits:
        paragraphs.append("\n".join(plan.commits))
    if plan.overrides:
        paragraphs.append("Overrides:\n" + "\n".join(f"- {o}" for o in plan.overrides))
    if plan.records:
        paragraphs.append("\n".join(plan.records))
    trailers = [f"Clmgit-Action: {plan.action}"]
    if plan.source:
        trailers.append(f"Clmgit-Source: {plan.source}")
    trailers += [f"Clmgit-Sha: {plan.sha}", f"Clmgit-Groups: {groups}",
                 f"Clmgit-Clusters: {sum(c.clusters for c in plan.changes)}"]
    if plan.action == "rollback":
        trailers.append("Clmgit-From: " + ",".join(f"{c.group}={c.old}" for c in plan.changes))
    trailers += gates.override_trailers(plan.overrides)
    trailers += [f"Clmgit-Health: {line.partition(': ')[2]}" for line in plan.records[:1]]
    paragraphs.append("\n".join(dict.fromkeys(trailers)))
    return "\n\n".join(paragraphs) + "\n"


def land_plan(ws: Workspace, plan: Plan, *, push: bool = False) -> Landed:
    """Write a plan: the commit on the control branch and the channel-branch move."""
    check(plan)
    moves = [plan.move] if plan.move else []
    return land(ws, files=plan.files, message=plan.message, moves=moves, push=push)
