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
from clmgit.promotion.write import SourceMove, land_moves
from clmgit.workspace import Workspace


def planned_moves(ws: Workspace, *, force: bool = False) -> list[SourceMove]:
    """Each source's branch of each channel whose groups are all at the same pins."""
    v = ws.versions
    moves: list[SourceMove] = []
    refusals: list[str] = []
    for ch in ws.channels.values():
        pins = [ch.pins_of(g) for g in ch.groups]
        if not pins or any(p is None or p != pins[0] for p in pins):
            continue  # unpinned, partly promoted, or a group without a pin: the branches stay
        for name, sha in (pins[0] or {}).items():
            branch = v.branch_name(name, ch)
            planned = plan_branch_move(v.repo(name), branch, v.branch(name, branch), sha)
            if planned.refusal and not force:
                refusals.append(v.named(name, planned.refusal))
            elif move := planned.taken():
                moves.append(SourceMove(name, move))
    if refusals:
        raise RefusedError("sync-branches refused: " + "; ".join(refusals))
    return moves


def sync_branches(
    ws: Workspace, *, push: bool = False, dry_run: bool = False, force: bool = False
) -> list[SourceMove]:
    moves = planned_moves(ws, force=force)
    if not dry_run:  # no moves: a --push run still catches the local branches up
        local = [m.move for m in moves if ws.sources.get(m.source).repo is None]
        others = [m for m in moves if ws.sources.get(m.source).repo is not None]
        land_moves(ws, files={}, message=record_message(ws, local), moves=local, others=others,
                   push=push)
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
