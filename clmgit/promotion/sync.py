"""`sync-branches`: bring each channel branch to the content all of its groups are pinned to.

A branch is at its pin when their `cluster/` trees are equal; otherwise it moves by fast-forward
or promotion merge (content.py), and a branch that carries content the pin lacks is refused.
"""

from __future__ import annotations

from clmgit.errors import RefusedError
from clmgit.promotion.content import BranchMove, plan_branch_move
from clmgit.promotion.write import land
from clmgit.workspace import Workspace


def planned_moves(ws: Workspace, *, force: bool = False) -> list[BranchMove]:
    moves, refusals = [], []
    for ch in ws.channels.values():
        shas = {g.sha for g in ch.groups}
        if len(shas) != 1 or None in shas:
            continue  # unpinned, partly promoted, or a group without a pin: the branch stays
        (sha,) = shas
        assert sha is not None
        planned = plan_branch_move(ws.repo, ch.branch, ws.branch_head(ch.branch), sha)
        if planned.refusal and not force:
            refusals.append(planned.refusal)
        elif planned.move:
            moves.append(planned.move)
    if refusals:
        raise RefusedError("sync-branches refused: " + "; ".join(refusals))
    return moves


def sync_branches(
    ws: Workspace, *, push: bool = False, dry_run: bool = False, force: bool = False
) -> list[BranchMove]:
    moves = planned_moves(ws, force=force)
    if not dry_run:
        land(ws, files={}, message="", moves=moves, push=push)  # no moves: catches up
    return moves
