"""Landing a change of channel files: one commit on the control branch, channel branches moved
with it, all locally or in one atomic push to the remote (local refs move only after it lands,
from where they were: a --push plan is made on the remote, see remote.py). The channel branches
of other config sources move after it, one atomic push per source's remote."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clmgit.adapters.git import GitRepo, RefUpdate
from clmgit.errors import PushRejectedError
from clmgit.promotion.content import BranchMove, HotfixMerge, MoveKind
from clmgit.workspace import Workspace


@dataclass(frozen=True)
class SourceMove:
    """A channel branch of a config source moving with the pins."""

    source: str
    move: BranchMove


@dataclass(frozen=True)
class Landed:
    commit: str | None
    pushed: bool
    branch: str


def land(
    ws: Workspace,
    *,
    files: Mapping[str, str],
    message: str,
    moves: Sequence[BranchMove] = (),
    push: bool = False,
    ours: Sequence[str] = (),
) -> Landed:
    """Commit `files` on top of the control branch and move channel branches with it
    (`Workspace.write`); with `push`, in one atomic push to the remote first."""
    updates = [RefUpdate(f"refs/heads/{m.branch}", move_commit(ws.repo, m), m.old)
               for m in moves]
    commit = ws.write(files=files, message=message, updates=updates, push=push, ours=ours)
    written = bool(files or message or updates)
    return Landed(commit=commit, pushed=push and written, branch=ws.control_branch)


def catch_up(ws: Workspace) -> None:
    """Bring the local branches a --push plan read to where the remote has them (nothing to
    push: an earlier run landed there, or another clone did)."""
    ws.repo.update_refs(ws.local_updates([]))


def move_commit(repo: GitRepo, move: BranchMove) -> str:
    """The commit the branch will point at: the SHA itself, or a promotion merge onto it (a
    hotfix merge: the fix merged into the branch)."""
    if isinstance(move, HotfixMerge):
        assert move.old is not None
        message = (
            f"Merge hotfix {move.new[:7]} of {move.channel} into {move.branch}\n\n"
            f"The hotfix pinned in channel {move.channel}, merged by clmgit sync-branches so that "
            f"it reaches the channels after {move.branch} by promotion.\n\n"
            f"Clmgit-Hotfix: {move.new}\n"
        )
        return repo.merge_commit(head=move.old, new=move.new, message=message, tree=move.tree)
    if move.kind is not MoveKind.PROMOTION_MERGE:
        return move.new
    assert move.old is not None
    forced = f"--force: {move.override}\n\n" if move.override else ""
    trailers = f"Clmgit-Branch-Sha: {move.new}\n"
    if move.override:
        trailers += "Clmgit-Override: force\n"
    message = (
        f"Promote {move.branch} to {move.new[:7]}\n\n"
        f"The tree of {move.new} on top of {move.old[:7]}; made by clmgit so that the branch "
        f"moves without rewriting its history.\n\n{forced}{trailers}"
    )
    return repo.merge_commit(head=move.old, new=move.new, message=message)


def land_moves(ws: Workspace, *, files: Mapping[str, str], message: str,
               moves: Sequence[BranchMove], others: Sequence[SourceMove],
               push: bool = False) -> Landed:
    """`land` the control-branch commit with this repository's moves, then each other source's
    branch moves: locally, or with `push` in one atomic push to its remote."""
    if push:
        check_remotes(ws, others)
    landed = land(ws, files=files, message=message, moves=moves, push=push)
    land_source_moves(ws, others, push=push)
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
