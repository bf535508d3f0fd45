"""`sync-branches`: bring each channel branch to the content all of its groups are pinned to.

A branch is at its pin when their `cluster/` trees are equal; otherwise it moves by fast-forward
or promotion merge (content.py), and a branch that carries content the pin lacks is refused.
`--force` moves it anyway and records that: a commit on the control branch (in `history`) and a
`Clmgit-Override: force` trailer on the promotion merge, both naming what was dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from clmgit.errors import RefusedError
from clmgit.promotion.content import BranchMove, plan_branch_move
from clmgit.promotion.write import land
from clmgit.workspace import Workspace


def planned_moves(ws: Workspace, *, force: bool = False) -> list[BranchMove]:
    moves: list[BranchMove] = []
    refusals: list[str] = []
    for ch in ws.channels.values():
        shas = {g.sha for g in ch.groups}
        if len(shas) != 1 or None in shas:
            continue  # unpinned, partly promoted, or a group without a pin: the branch stays
        (sha,) = shas
        assert sha is not None
        planned = plan_branch_move(ws.repo, ch.branch, ws.branch_head(ch.branch), sha)
        if planned.refusal and not force:
            refusals.append(planned.refusal)
        elif move := planned.taken():
            moves.append(move)
    if refusals:
        raise RefusedError("sync-branches refused: " + "; ".join(refusals))
    return moves


def sync_branches(
    ws: Workspace, *, push: bool = False, dry_run: bool = False, force: bool = False
) -> list[BranchMove]:
    moves = planned_moves(ws, force=force)
    if not dry_run:  # no moves: a --push run still catches the local branches up
        land(ws, files={}, message=record_message(ws, moves), moves=moves, push=push)
    return moves


def record_message(ws: Workspace, moves: Sequence[BranchMove]) -> str:
    """The control-branch commit that records forced moves (`history` shows it), landed with
    them; "" when nothing was forced: a plain move only follows pins already in history."""
    forced = [m for m in moves if m.override]
    if not forced:
        return ""
    by_branch = {ch.branch: ch.name for ch in ws.channels.values()}
    names = ",".join(by_branch[m.branch] for m in forced)
    moved = ", ".join(f"{m.branch} {(m.old or 'none')[:7]}..{m.new[:7]}" for m in forced)
    body = "\n".join(f"--force: {m.override}" for m in forced)
    trailers = f"Clmgit-Action: sync\nClmgit-Channel: {names}\nClmgit-Override: force"
    if len(forced) == 1:
        trailers += f"\nClmgit-Sha: {forced[0].new}"
    return f"sync({names}): forced {moved}\n\n{body}\n\n{trailers}\n"
