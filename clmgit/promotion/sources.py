"""Promotion of several config sources together (`sources:` in `clmgit.yaml`).

A group's pin is a map {source: sha}. `plan_sources_promotion` moves every source of the
selected groups in one commit of the channel file, each source by the same rules as one:
its SHA from `--sha source=sha`, else the one the source channel's groups agree on, else the
head of the source's branch; the gates as sources_gates.py judges them. A refusal in one
source refuses the whole promotion. Once every group of the target is at the new pins, each
source's channel branch follows (in its own repository; with `--push` one atomic push per
remote, the control branch's first, once every other remote is checked).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from clmgit import yamledit
from clmgit.adapters.git import RefUpdate
from clmgit.channels import DEFAULT_GROUP, Channel, group_pins
from clmgit.errors import ConfigError, GitError, PushRejectedError, RefusedError
from clmgit.layout import Sources
from clmgit.model import config_version
from clmgit.promotion import gates
from clmgit.promotion.content import BranchMove, plan_branch_move, same_content
from clmgit.promotion.promote import GroupChange, Plan, group_members
from clmgit.promotion.sources_gates import per_source_gates
from clmgit.promotion.write import Landed, land, move_commit
from clmgit.timestamps import format_timestamp
from clmgit.workspace import SourceRepos, Workspace


@dataclass(frozen=True)
class SourceMove:
    """A channel branch of a source other than this repository's, moving with the pins."""

    source: str
    move: BranchMove


def parse_sha_options(values: Sequence[str], sources: Sources,
                      option: str = "--sha") -> dict[str, str]:
    """`--sha source=sha` (repeatable) as {source: sha}; a bare SHA only with one source."""
    out: dict[str, str] = {}
    for value in values:
        name, sep, sha = value.rpartition("=")
        if not sep:
            if sources.several:
                raise ConfigError(f"{option} {value}: name the source, as source=sha "
                                  f"(sources: {', '.join(sources.names)})")
            name, sha = sources.main.name, value
        sources.get(name)  # refuses an unknown name
        if name in out:
            raise ConfigError(f"{option} names source {name!r} twice")
        out[name] = sha
    return out


def plan_sources_promotion(
    ws: Workspace, *, source: str, target: str, groups: Sequence[str] = (),
    shas: Mapping[str, str] | None = None, force: bool = False, ignore_freeze: bool = False,
    from_any: bool = False, now: datetime,
) -> Plan:
    sources, repos = ws.sources, ws.source_repos
    src, dst = ws.channel(source), ws.channel(target)
    if src.name == dst.name:
        raise ConfigError("source and target are the same channel")
    new = {s.name: source_sha_of(repos, s.name, s.branch(src), src, sources,
                                 (shas or {}).get(s.name)) for s in sources.sources}
    version = config_version(list(new.items()))
    if groups and not dst.groups:
        dst.group(groups[0])  # raises: the channel has no groups
    notes: tuple[str, ...] = ()
    if dst.groups:
        selected = [(g.name, group_pins(g, sources)) for g in dst.select(groups)]
    else:
        heads = {s.name: repos.head(s.name, s.branch(dst)) for s in sources.sources}
        if all(same_content(repos.repo(n), heads[n], new[n]) for n in new):
            return Plan("promote", dst.name, src.name, version, (), (DEFAULT_GROUP,))
        selected = [(DEFAULT_GROUP, heads)]
        notes = (f"{dst.name!r} follows its branches today; this promotion pins it (group "
                 f"{DEFAULT_GROUP!r}), and its clusters then follow the pins",)
    members = group_members(ws, dst)
    olds = {name: old for name, old in selected}
    changed = [name for name, old in selected if old != new]
    unchanged = tuple(name for name, old in selected if old == new)
    changes = tuple(GroupChange(n, _version(olds[n], sources), version, members[n])
                    for n in changed)
    if not changes:
        return Plan("promote", dst.name, src.name, version, (), unchanged)

    results = [gates.check_freeze(dst), gates.check_window(dst, now),
               gates.check_source(src, dst)]
    results += per_source_gates(ws, src, dst, new, olds, changed, now)
    moves: list[tuple[str, BranchMove]] = []
    if _all_at(dst, changed, new, sources):
        known = {n: [o[n] for o in olds.values() if o] if dst.groups else [] for n in new}
        moves, refused = plan_source_moves(ws, dst, new, known)
        results += refused
    verdict = gates.judge(results, force=force, ignore_freeze=ignore_freeze, from_any=from_any)
    pins = {n: {"sha": dict(new), "promoted_at": format_timestamp(now),
                "promoted_from": src.name} for n in changed}
    plan = Plan("promote", dst.name, src.name, version, changes, unchanged, verdict.overrides,
                refusals=verdict.refusals, notes=notes)
    return with_writes(ws, plan, dst, pins, moves,
                       message=commit_message(plan, olds, new, sources))


def plan_source_moves(ws: Workspace, ch: Channel, new: Mapping[str, str],
                      known: Mapping[str, Sequence[str]],
                      ) -> tuple[list[tuple[str, BranchMove]], list[gates.GateResult]]:
    """Each source's channel branch to its new pin (in its own repository), and the refusals
    of branches that carry content the pins lack (gate `branch_content`, naming the source)."""
    moves: list[tuple[str, BranchMove]] = []
    refused = []
    for s in ws.sources.sources:
        branch = s.branch(ch)
        planned = plan_branch_move(ws.source_repos.repo(s.name), branch,
                                   _branch(ws.source_repos, s.name, branch), new[s.name],
                                   known=known.get(s.name, ()))
        if planned.refusal:
            refused.append(gates.GateResult(gates.BRANCH_CONTENT,
                                            f"source {s.name!r}: {planned.refusal}"))
        if (move := planned.taken()) is not None:
            moves.append((s.name, move))
    return moves, refused


def with_writes(ws: Workspace, plan: Plan, ch: Channel, pins: Mapping[str, Mapping[str, Any]],
                moves: Sequence[tuple[str, BranchMove]], *, message: str) -> Plan:
    """The plan with the channel file, the commit message and the branch moves: this
    repository's with the commit, the other sources' after it."""
    sources = ws.sources
    main_moves = [m for n, m in moves if sources.get(n).repo is None]
    return replace(plan, files={ch.path: pin_sources(ws.channel_text(ch), ch, pins)},
                   message=message, move=main_moves[0] if main_moves else None,
                   source_moves=tuple(SourceMove(n, m) for n, m in moves
                                      if sources.get(n).repo is not None))


def _version(old: Mapping[str, str] | None, sources: Sources) -> str | None:
    return config_version([(n, old[n]) for n in sources.names]) if old else None


def _branch(repos: SourceRepos, name: str, branch: str) -> str | None:
    try:
        return repos.head(name, branch)
    except GitError:
        return None


def _all_at(dst: Channel, changed: Sequence[str], new: Mapping[str, str],
            sources: Sources) -> bool:
    """Every group of the target at the new pins once the change lands."""
    return all(g.name in changed or group_pins(g, sources) == dict(new) for g in dst.groups)


def source_sha_of(repos: SourceRepos, name: str, branch: str, src: Channel, sources: Sources,
                given: str | None) -> str:
    """DESIGN.md §4.1 for one source."""
    head = repos.head(name, branch)
    repo = repos.repo(name)
    if given:
        full = repo.object_id(given)
        if full is None or repo.object_types([full]).get(full) != "commit":
            raise GitError(f"source {name!r}: commit {given} does not exist in {repo.location}")
        if not repo.is_ancestor(full, head):
            raise RefusedError(f"source {name!r}: {given} is not on branch {branch!r} of "
                               f"channel {src.name!r}")
        return full
    pinned = {g.name: p[name] for g in src.groups if (p := group_pins(g, sources))}
    if not pinned:
        return head
    if len(set(pinned.values())) > 1:
        listing = ", ".join(f"{g} at {s[:7]}" for g, s in pinned.items())
        raise RefusedError(f"source {name!r}: the groups of {src.name!r} are at different "
                           f"SHAs ({listing}); choose one with --sha {name}=SHA")
    return next(iter(pinned.values()))


def pin_sources(text: str, channel: Channel, pins: Mapping[str, Mapping[str, Any]]) -> str:
    """The channel file with the named groups pinned to {source: sha} maps, each written as
    one flow mapping (`sha: {main: ..., addons: ...}`). A channel without groups gets a
    `default` group."""
    doc = yamledit.Document(text, channel.path)
    if not channel.groups:
        (values,) = pins.values()
        data = dict(doc.data or {})
        data["groups"] = [{"name": DEFAULT_GROUP, **values}]
        doc.append_block("groups:\n  - name: default\n" + "".join(
            f"    {k}: {yamledit.format_scalar(v)}\n" for k, v in values.items()), data)
        return doc.text
    index = {g.name: i for i, g in enumerate(channel.groups)}
    for name, values in pins.items():
        doc.set(["groups", index[name]], values)
    return doc.text


def commit_message(plan: Plan, olds: Mapping[str, Mapping[str, str] | None],
                   new: Mapping[str, str], sources: Sources) -> str:
    """Subject `promote(<target>): <source> main a..b, addons c..d [<groups>]`; trailers as
    for one source, `Clmgit-Sha` the config version."""
    groups = ",".join(c.group for c in plan.changes)
    first = olds[plan.changes[0].group]
    moves = ", ".join(f"{n} {first[n][:7] if first else 'none'}..{new[n][:7]}"
                      for n in sources.names)
    paragraphs = [f"promote({plan.target}): {plan.source} {moves} [{groups}]"]
    if plan.overrides:
        paragraphs.append("Overrides:\n" + "\n".join(f"- {o}" for o in plan.overrides))
    trailers = ["Clmgit-Action: promote", f"Clmgit-Source: {plan.source}",
                f"Clmgit-Sha: {plan.sha}", f"Clmgit-Groups: {groups}",
                f"Clmgit-Clusters: {sum(c.clusters for c in plan.changes)}"]
    trailers += gates.override_trailers(plan.overrides)
    paragraphs.append("\n".join(dict.fromkeys(trailers)))
    return "\n\n".join(paragraphs) + "\n"


def land_sources_plan(ws: Workspace, plan: Plan, *, push: bool = False) -> Landed:
    """The control-branch commit (with this repository's branch move) first, then each other
    source's branch moves: locally, or with `push` in one atomic push to its remote."""
    from clmgit.promotion.promote import check

    check(plan)
    if push:
        check_remotes(ws, plan.source_moves)
    landed = land(ws, files=plan.files, message=plan.message,
                  moves=[plan.move] if plan.move else [], push=push)
    land_source_moves(ws, plan.source_moves, push=push)
    return landed


def check_remotes(ws: Workspace, moves: Sequence[SourceMove]) -> None:
    """Before anything is pushed: every other source's branch is, on its remote, where the plan
    saw it (or already moved), so that its push after the control branch's lands. Pushes to
    several remotes cannot be one transaction; this keeps a refusal from leaving one behind."""
    for sm in moves:
        ref = f"refs/heads/{sm.move.branch}"
        there = ws.source_repos.repo(sm.source).remote_sha("origin", ref)
        if there not in (sm.move.old, sm.move.new):
            raise PushRejectedError(
                f"branch {sm.move.branch!r} of config source {sm.source!r} is at "
                f"{(there or 'nothing')[:7]} on its remote, not at {(sm.move.old or 'nothing')[:7]}"
                " as planned; nothing was pushed — fetch that source and run the command again")


def land_source_moves(ws: Workspace, moves: Sequence[SourceMove], *, push: bool) -> None:
    """Move the channel branches of other sources: per source one atomic push to its `origin`
    (with `push`), then its local branches; a URL source's mirror moves only with `push`."""
    by_source: dict[str, list[RefUpdate]] = {}
    for sm in moves:
        repo = ws.source_repos.repo(sm.source)
        by_source.setdefault(sm.source, []).append(
            RefUpdate(f"refs/heads/{sm.move.branch}", move_commit(repo, sm.move), sm.move.old))
    for name, updates in by_source.items():
        repo, url = ws.source_repos.repo(name), ws.source_repos.url(name)
        if push:
            repo.push("origin", updates)
        elif url is not None:
            continue  # a mirror's branches are the remote's: they move only with --push
        if url is None:
            repo.update_refs(updates)


def sync_sources(ws: Workspace, *, push: bool = False, dry_run: bool = False,
                 force: bool = False) -> list[SourceMove]:
    """`sync-branches` with several sources: each channel whose groups are all at the same
    pins gets every source's branch there."""
    from clmgit.promotion.sync import record_message

    moves: list[SourceMove] = []
    refusals: list[str] = []
    for ch in ws.channels.values():
        maps = [group_pins(g, ws.sources) for g in ch.groups]
        if not maps or any(m is None or m != maps[0] for m in maps):
            continue  # unpinned, partly promoted, or a group without pins: the branches stay
        planned, refused = plan_source_moves(ws, ch, maps[0] or {}, {})
        refusals += [r.refusal for r in refused if r.refusal and not force]
        moves += [SourceMove(n, m) for n, m in planned]
    if refusals:
        raise RefusedError("sync-branches refused: " + "; ".join(refusals))
    if not dry_run:
        others = [sm for sm in moves if ws.sources.get(sm.source).repo is not None]
        if push:
            check_remotes(ws, others)
        main = [sm.move for sm in moves if ws.sources.get(sm.source).repo is None]
        land(ws, files={}, message=record_message(ws, main), moves=main, push=push)
        land_source_moves(ws, others, push=push)
    return moves
