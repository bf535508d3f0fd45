"""The planner (docs/explanation/promotion.md): promotion and rollback of a config version —
every config source's commit, one source being the case n = 1 — computed and checked first, then
landed.

`plan_promotion` and `plan_rollback` read only. They refuse bad input with one sentence, and
otherwise return a `Plan` holding the new channel file, the commit message, the channel-branch
moves (this repository's and the other sources') and the refusals of any gate no override lifts
(`GATES`; forward-only and the branches' own content are gates too). `check` turns a refused
plan into its sentence; `land_plan` writes an allowed one. A dry run is a plan that is printed
(refused or not) and never landed; `status --by group` and the report ask the same function.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from clmgit import timestamps
from clmgit.channels import DEFAULT_GROUP, Channel, Group, Pins, encode_pin, pin_groups, pin_range
from clmgit.errors import ConfigError, RefusedError
from clmgit.model import short_version
from clmgit.promotion import gates, health
from clmgit.promotion.content import BranchMove, plan_branch_move
from clmgit.promotion.history import pins_in_history
from clmgit.promotion.write import Landed, SourceMove, land_moves
from clmgit.timestamps import format_timestamp
from clmgit.versions import parse_pins
from clmgit.workspace import Workspace

SHORTLOG_LIMIT = 50

#: The gates every promotion is judged by, in the order their refusals are listed. A new gate
#: is a function of `gates.Promotion` returning `gates.GateResult`s, added here.
GATES: tuple[Callable[[gates.Promotion], list[gates.GateResult]], ...] = (
    gates.check_freeze, gates.check_window, gates.check_source, gates.check_groups_before,
    health.check_groups_healthy, gates.check_applied, health.check_healthy, gates.check_soak,
    gates.check_forward, gates.check_signed,
)
#: The gates that judge a change where it ran before, in the source channel. A hotfix (a
#: commit of the target's own branch) has run in no channel before: they are not run for it,
#: and the groups of the target itself (`groups_before`, the canary first) are its proof.
UPSTREAM = (gates.check_source, gates.check_applied, health.check_healthy, gates.check_soak)


@dataclass(frozen=True)
class GroupChange:
    group: str
    old: str | None  # config versions (one source: SHAs)
    new: str
    clusters: int = 0  # how many running clusters the change moves


@dataclass(frozen=True)
class Plan:
    action: str  # "promote", "hotfix" (a commit of the target's own branch) or "rollback"
    target: str
    source: str | None
    sha: str  # the config version pinned (one source: the SHA)
    changes: tuple[GroupChange, ...]
    unchanged: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()  # shortlog lines of what the change brings to cluster/
    move: BranchMove | None = None  # this repository's channel branch
    files: dict[str, str] = field(default_factory=dict)
    message: str = ""
    refusals: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # what the plan does that is easy to miss
    #: Branch moves in the repositories of other config sources.
    source_moves: tuple[SourceMove, ...] = ()
    #: What gates record in the commit (the health verdicts of the source clusters).
    records: tuple[str, ...] = ()

    @property
    def nothing_to_do(self) -> bool:
        """Every selected group is at the version already (and no gate refuses)."""
        return not self.refusals and not self.changes


def check(plan: Plan) -> Plan:
    """The plan itself, or the refusal of it as one sentence."""
    if plan.refusals:
        verb = "promotion" if plan.action == "promote" else plan.action
        raise RefusedError(
            f"{verb} of {short_version(plan.sha)} to {plan.target!r} refused: "
            + "; ".join(plan.refusals)
        )
    return plan


def _now() -> datetime:
    return timestamps.now().replace(microsecond=0)


def given_pins(ws: Workspace, sha: str | Sequence[str] | None, option: str) -> dict[str, str]:
    """`--sha`/`--to` values as {source: full commit id}."""
    values = [sha] if isinstance(sha, str) else list(sha or ())
    v = ws.versions
    return {n: v.resolve(n, ref) for n, ref in parse_pins(values, v.names, option).items()}


def source_pins(ws: Workspace, source: Channel, given: Mapping[str, str],
                target: Channel | None = None) -> dict[str, str]:
    """Promotion rule 1 (docs/explanation/promotion.md), per source: `--sha`, else the commit the
    source channel's pinned groups agree on, else the head of its branch. A hotfix is the case
    `source` is `target`: `--sha` names a commit of the target's own branch."""
    v = ws.versions
    heads = v.head(source)
    out = {}
    for name in v.names:
        if name in given:
            if not v.is_ancestor(name, given[name], heads[name]):
                raise RefusedError(v.named(name, _not_on_branch(ws, name, given[name], source,
                                                                target)))
            out[name] = given[name]
            continue
        pinned = {g.name: g.pins[name] for g in source.groups if name in g.pins}
        if len(set(pinned.values())) > 1:
            listing = ", ".join(f"{g} at {s[:7]}" for g, s in pinned.items())
            option = "--sha" if len(v.names) == 1 else f"--sha {name}=SHA"
            raise RefusedError(v.named(name, (
                f"the groups of {source.name!r} are at different SHAs ({listing}); "
                f"choose one with {option}")))
        out[name] = next(iter(pinned.values()), heads[name])
    return out


def _not_on_branch(ws: Workspace, name: str, sha: str, source: Channel,
                   target: Channel | None) -> str:
    """Why `--sha` is refused, and the next step: a commit of the target's own branch ships as
    a hotfix; a hotfix lands on the channel's branch first."""
    v = ws.versions
    branch = v.branch_name(name, source)
    said = f"{sha} is not on branch {branch!r} of channel {source.name!r}"
    if target is None or target.name == source.name:
        return (f"{said}; a hotfix is a commit of the channel's own branch: merge it into "
                f"{branch!r} first (a reviewed pull request), then promote it")
    heads = v.head(target)
    if v.is_ancestor(name, sha, heads[name]):
        return (f"{said}; it is on {target.name!r}'s own branch, so ship it as a hotfix: "
                f"clmgit promote {target.name} {target.name} --sha {_spelled(ws, name, sha)}")
    return said


def _spelled(ws: Workspace, name: str, sha: str) -> str:
    return sha[:12] if len(ws.versions.names) == 1 else f"{name}={sha[:12]}"


def plan_promotion(
    ws: Workspace,
    *,
    source: str,
    target: str,
    groups: Sequence[str] = (),
    sha: str | Sequence[str] | None = None,
    force: bool = False,
    ignore_freeze: bool = False,
    from_any: bool = False,
    now: datetime | None = None,
) -> Plan:
    """Pin the groups of `target` to the version `source` has (`sha`: `--sha` values). With
    `source` the target itself the promotion is a hotfix: `sha` names commits of the target's
    own branch; sources it does not name stay at the target's pins."""
    now = now or _now()
    v = ws.versions
    src, dst = ws.channel(source), ws.channel(target)
    hotfix = src.name == dst.name
    if hotfix and not sha:
        raise ConfigError(
            f"source and target are the same channel; to ship a hotfix committed on branch "
            f"{dst.branch!r}, name it: clmgit promote {dst.name} {dst.name} --sha SHA")
    new = source_pins(ws, src, given_pins(ws, sha, "--sha"), dst)
    version = v.version(new)
    if groups and not dst.groups:
        dst.group(groups[0])  # raises: the channel has no groups
    notes: tuple[str, ...] = ()
    selected: list[tuple[str, Pins | None]]
    if dst.groups:
        selected = [(g.name, dst.pins_of(g)) for g in dst.select(groups)]
    else:
        # A channel that follows its branch is, in effect, pinned at the branch head.
        heads = v.head(dst)
        if all(v.same_content(n, heads[n], new[n]) for n in new):
            return Plan("promote", dst.name, src.name, version, (), (DEFAULT_GROUP,))
        selected = [(DEFAULT_GROUP, heads)]
        follows = (f"branch {dst.branch!r}", "pin, not the branch") if len(new) == 1 else (
            "its branches", "pins")
        notes = (f"{dst.name!r} follows {follows[0]} today; this promotion pins it (group "
                 f"{DEFAULT_GROUP!r}), and its clusters then follow the {follows[1]}",)
    members = group_members(ws, dst)
    olds = {name: old for name, old in selected if old != new}
    changes = tuple(GroupChange(name, v.version(old) if old else None, version, members[name])
                    for name, old in olds.items())
    unchanged = tuple(name for name, old in selected if old == new)
    if not changes:
        return Plan("promote", dst.name, src.name, version, (), unchanged)

    promotion = gates.Promotion(ws, src, dst, new, olds, tuple(olds) if dst.groups else (), now)
    results = [r for gate in GATES if not (hotfix and gate in UPSTREAM)
               for r in gate(promotion)]
    if hotfix:
        notes += (hotfix_note(dst),)
    moves, refused = _branch_moves(ws, dst, {**_pins(dst), **{g: new for g in olds}}, new,
                                   known=[o for o in olds.values() if o] if dst.groups else [])
    verdict = gates.judge([*results, *refused], force=force, ignore_freeze=ignore_freeze,
                          from_any=from_any)
    log = v.log(new, [o for o in olds.values() if o], limit=SHORTLOG_LIMIT)
    commits = tuple(f"{c.sha[:7]} {c.subject} ({c.author})" for c in log.commits)
    if log.total > len(log.commits):
        commits += (f"... and {log.total - len(log.commits)} more",)
    plan = Plan("hotfix" if hotfix else "promote", dst.name, src.name, version, changes,
                unchanged, verdict.overrides, commits, refusals=verdict.refusals, notes=notes,
                records=tuple(line for r in results for line in r.record))
    pins = {g: {"sha": encode_pin(new), "promoted_at": format_timestamp(now),
                "promoted_from": gates.HOTFIX if hotfix else src.name} for g in olds}
    return _with_writes(ws, plan, dst, pins, moves, old=olds[changes[0].group], new=new)


def hotfix_note(target: Channel) -> str:
    """What a hotfix is judged by (docs/explanation/promotion.md, "Hotfixes")."""
    upstream = [name for name, on in (
        (gates.APPLIED, target.gates.applied_in_source), (gates.SOAK, target.gates.soak),
        (gates.HEALTHY_IN_SOURCE, target.gates.healthy_in_source)) if on]
    skipped = f" ({', '.join(upstream)} not judged)" if upstream else ""
    return (f"a hotfix has run in no channel before {target.name!r}: the gates of its source "
            f"channel do not apply{skipped}; freeze, windows, signing, forward-only and "
            "groups_before do; `clmgit sync-branches` then merges it into the first channel's "
            "branch")


def plan_rollback(
    ws: Workspace,
    *,
    channel: str,
    groups: Sequence[str] = (),
    to: str | Sequence[str] | None = None,
    force: bool = False,
    now: datetime | None = None,
) -> Plan:
    """Pin the groups of `channel` back to their previous pins (or to `to`; with several
    sources the sources `to` does not name stay where they are)."""
    now = now or _now()
    v = ws.versions
    ch = ws.channel(channel)
    if not ch.groups:
        raise RefusedError(f"channel {ch.name!r} has no pinned groups to roll back")
    given = given_pins(ws, to, "--to")
    several = len(v.names) > 1
    backs: dict[str, Pins] = {}
    olds: dict[str, Pins] = {}
    unchanged: list[str] = []
    last: Pins | None = None
    for g in ch.select(groups):
        current = ch.pins_of(g)
        if current is None:
            every = " of every source" if several else ""
            raise RefusedError(f"group {g.name!r} of {ch.name!r} has no pin{every} to roll back")
        back = {**current, **given} if given else _previous(ws, ch, g, current)
        if back is None:
            raise RefusedError(
                f"history has no earlier pin{'s' if several else ''} of group {g.name!r} of "
                f"{ch.name!r}; pass --to {'SOURCE=SHA' if several else 'SHA'}")
        _check_behind(ws, ch, g, current, back)
        last = back
        if back == current:
            unchanged.append(g.name)
        else:
            backs[g.name], olds[g.name] = back, current
    if not backs:
        return Plan("rollback", ch.name, None, v.version(last) if last else "", (),
                    tuple(unchanged))
    members = group_members(ws, ch)
    changes = tuple(GroupChange(n, v.version(olds[n]), v.version(b), members[n])
                    for n, b in backs.items())
    moves, refused = _branch_moves(ws, ch, {**_pins(ch), **backs}, next(iter(backs.values())),
                                   known=list(olds.values()))
    verdict = gates.judge([gates.window_gate(ch, now), *refused], force=force, ignore_freeze=False)
    plan = Plan("rollback", ch.name, None, changes[0].new, changes, tuple(unchanged),
                verdict.overrides, refusals=verdict.refusals)
    pins = {n: {"sha": encode_pin(b), "promoted_at": format_timestamp(now),
                "promoted_from": "rollback"} for n, b in backs.items()}
    first = changes[0].group
    return _with_writes(ws, plan, ch, pins, moves, old=olds[first], new=backs[first])


def _previous(ws: Workspace, ch: Channel, g: Group, current: Pins) -> Pins | None:
    """The most recent earlier pin of the group that is behind its current one in every source.

    Pins ahead of the current one (undone by an earlier rollback) are passed over, so repeated
    rollbacks keep going back instead of flipping between two versions.
    """
    v = ws.versions
    for pins in pins_in_history(ws, ch, g):
        if (set(pins) == set(current) and pins != current
                and all(v.is_ancestor(n, pins[n], current[n]) for n in current)):
            return {n: pins[n] for n in current}
    return None


def _check_behind(ws: Workspace, ch: Channel, g: Group, current: Pins, back: Pins) -> None:
    v = ws.versions
    for name, sha in back.items():
        if not v.is_ancestor(name, sha, current[name]):
            raise RefusedError(v.named(name, (
                f"{sha[:7]} is not behind group {g.name!r} of {ch.name!r} (at "
                f"{current[name][:7]}); moving forward is `clmgit promote`")))


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


def _pins(ch: Channel) -> dict[str, Pins | None]:
    return {g.name: ch.pins_of(g) for g in ch.groups}


def _branch_moves(ws: Workspace, ch: Channel, after: Mapping[str, Pins | None], pins: Pins, *,
                  known: Sequence[Pins]) -> tuple[list[SourceMove], list[gates.GateResult]]:
    """Each source's channel branch to its commit of `pins`, once every group of the channel
    is there (`after`: every group's pin once the change lands); the refusals of branches that
    carry content the pins lack (gate `branch_content`)."""
    if any(p != pins for p in after.values()):
        return [], []
    v = ws.versions
    moves, refused = [], []
    for name, sha in pins.items():
        branch = v.branch_name(name, ch)
        planned = plan_branch_move(v.repo(name), branch, v.branch(name, branch), sha,
                                   known=[k[name] for k in known])
        refused.append(gates.GateResult(gates.BRANCH_CONTENT,
                                        planned.refusal and v.named(name, planned.refusal)))
        if (move := planned.taken()) is not None:
            moves.append(SourceMove(name, move))
    return moves, refused


def _with_writes(ws: Workspace, plan: Plan, ch: Channel, pins: Mapping[str, Mapping[str, Any]],
                 moves: Sequence[SourceMove], *, old: Pins | None, new: Pins) -> Plan:
    """The plan with the channel file, the commit message and the branch moves: this
    repository's with the commit, the other sources' after it."""
    local = [m.move for m in moves if ws.sources.get(m.source).repo is None]
    plan = replace(plan, files={ch.path: pin_groups(ws.channel_text(ch), ch, pins)},
                   move=local[0] if local else None,
                   source_moves=tuple(m for m in moves
                                      if ws.sources.get(m.source).repo is not None))
    return replace(plan, message=commit_message(plan, pin_range(old, new)))


def commit_message(plan: Plan, moved: str) -> str:
    """The commit of a plan; `moved` says how the pins move (`pin_range`)."""
    groups = ",".join(c.group for c in plan.changes)
    if plan.action == "promote":
        subject = f"promote({plan.target}): {plan.source} {moved} [{groups}]"
    elif plan.action == "hotfix":
        subject = f"hotfix({plan.target}): {moved} [{groups}]"
    else:
        subject = f"rollback({plan.target}): {moved} [{groups}]"
    paragraphs = [subject]
    if plan.action == "rollback":
        paragraphs.append(
            "\n".join(f"Roll back group {c.group} from {c.old} to {c.new}." for c in plan.changes)
        )
    if plan.commits:
        paragraphs.append("\n".join(plan.commits))
    if plan.action == "hotfix":  # what it was not judged by, wrapped as a commit body is
        paragraphs += ["\n".join(textwrap.wrap(n, 72, break_on_hyphens=False))
                       for n in plan.notes]
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
    """Write a plan: the commit on the control branch with this repository's branch move, then
    the other sources' branch moves."""
    check(plan)
    return land_moves(ws, files=plan.files, message=plan.message,
                      moves=[plan.move] if plan.move else [], others=plan.source_moves,
                      push=push)
