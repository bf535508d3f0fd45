"""`sync-branches`: move each channel branch to the SHA all of its groups are pinned to."""

from __future__ import annotations

from clmgit.promotion.write import BranchMove, land
from clmgit.workspace import Workspace


def planned_moves(ws: Workspace) -> list[BranchMove]:
    moves = []
    for ch in ws.channels.values():
        shas = {g.sha for g in ch.groups}
        if len(shas) != 1 or None in shas:
            continue  # unpinned, partly promoted, or a group without a pin: the branch stays
        (sha,) = shas
        assert sha is not None
        head = ws.repo.branch_sha(ch.branch)
        if head != sha:
            moves.append(BranchMove(ch.branch, head, sha))
    return moves


def sync_branches(ws: Workspace, *, push: bool = False, dry_run: bool = False) -> list[BranchMove]:
    moves = planned_moves(ws)
    if moves and not dry_run:
        land(ws, files={}, message="", moves=moves, push=push)
    return moves
