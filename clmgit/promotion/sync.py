"""`sync-branches`: bring each channel branch to the content all of its groups are pinned to,
and bring each hotfix back into the pipeline.

A branch is at its pin when their `cluster/` trees are equal; otherwise it moves by fast-forward
or promotion merge (content.py), and a branch that carries content the pin lacks is refused.
`--force` moves it anyway and records that: a commit on the control branch (in `history`) and a
`Clmgit-Override: force` trailer on the promotion merge, both naming what was dropped.

A hotfix (a group pinned with `promoted_from: hotfix`) is merged into the branch of the first
channel of its pipeline (the one without a `source:`, where new work lands) unless that branch
contains it; from there it reaches the channels between by ordinary promotions, so the next
`promote` into the hotfixed channel moves forward from the fix instead of dropping it. The merge
is recorded on the control branch too; one that conflicts is refused, whatever `--force` says.
"""

from __future__ import annotations

from collections.abc import Sequence

from clmgit.channels import Channel
from clmgit.errors import RefusedError
from clmgit.promotion.content import HotfixMerge, plan_branch_move, plan_hotfix_merge
from clmgit.promotion.gates import HOTFIX
from clmgit.promotion.write import SourceMove, land_moves
from clmgit.workspace import Workspace


def planned_moves(ws: Workspace, *, force: bool = False) -> list[SourceMove]:
    """Each source's branch of each channel whose groups are all at the same pins, then the
    hotfix merges into branches that do not move otherwise."""
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
    merges, conflicts = hotfix_merges(ws, busy={(m.source, m.move.branch) for m in moves})
    if refusals or conflicts:
        raise RefusedError("sync-branches refused: " + "; ".join([*refusals, *conflicts]))
    return moves + merges


def hotfix_merges(ws: Workspace, *, busy: set[tuple[str, str]]
                  ) -> tuple[list[SourceMove], list[str]]:
    """The merges of hotfix pins into the first channel's branch of each source, and the
    refusals of those that conflict. One merge per branch and run (the fix that contains the
    others); a branch in `busy` moves otherwise this run, and takes its merge on the next."""
    v = ws.versions
    fixes: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (source, branch): (fix, channel)
    for ch in ws.channels.values():
        root = _first(ws, ch)
        for g in ch.groups:
            pins = ch.pins_of(g)
            if root is ch or g.promoted_from != HOTFIX or pins is None:
                continue
            for name, sha in pins.items():
                fixes.setdefault((name, v.branch_name(name, root)), []).append((sha, ch.name))
    merges, conflicts = [], []
    for (name, branch), found in fixes.items():
        head = v.branch(name, branch)
        if head is None or (name, branch) in busy:
            continue
        fix, channel = _newest(ws, name, found)
        planned = plan_hotfix_merge(v.repo(name), branch, head, fix, channel=channel)
        if planned.refusal:
            conflicts.append(v.named(name, planned.refusal))
        elif planned.move is not None:
            merges.append(SourceMove(name, planned.move))
    return merges, conflicts


def _newest(ws: Workspace, name: str, found: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The fix that contains the others (the first found when none does)."""
    v = ws.versions
    for fix in found:
        if all(v.is_ancestor(name, other, fix[0]) for other, _ in found):
            return fix
    return found[0]


def _first(ws: Workspace, ch: Channel) -> Channel:
    """The first channel of `ch`'s pipeline: its source's source ..., the one without one."""
    while ch.source is not None:
        ch = ws.channel(ch.source)
    return ch


def sync_branches(
    ws: Workspace, *, push: bool = False, dry_run: bool = False, force: bool = False
) -> list[SourceMove]:
    moves = planned_moves(ws, force=force)
    if not dry_run:  # no moves: a --push run still catches the local branches up
        local = [m.move for m in moves if ws.sources.get(m.source).repo is None]
        others = [m for m in moves if ws.sources.get(m.source).repo is not None]
        land_moves(ws, files={}, message=record_message(ws, moves), moves=local, others=others,
                   push=push)
    return moves


def record_message(ws: Workspace, moves: Sequence[SourceMove]) -> str:
    """The control-branch commit that records forced moves and hotfix merges (`history` shows
    it), landed with them; "" when there is neither: a plain move only follows pins already
    in history."""
    forced = [sm.move for sm in moves
              if sm.move.override and ws.sources.get(sm.source).repo is None]
    merged = [sm for sm in moves if isinstance(sm.move, HotfixMerge)]
    if not forced and not merged:
        return ""
    v = ws.versions
    by_branch = {(n, v.branch_name(n, ch)): ch.name for ch in ws.channels.values()
                 for n in v.names}
    local = next(n for n in v.names if ws.sources.get(n).repo is None)
    names = ",".join(dict.fromkeys([*(by_branch[local, m.branch] for m in forced),
                                    *(by_branch[sm.source, sm.move.branch] for sm in merged)]))
    said, body = [], []
    if forced:
        said.append("forced " + ", ".join(f"{m.branch} {(m.old or 'none')[:7]}..{m.new[:7]}"
                                          for m in forced))
        body += [f"--force: {m.override}" for m in forced]
    for sm in merged:
        m = sm.move
        assert isinstance(m, HotfixMerge)
        said.append(f"merged hotfix {m.new[:7]} of {m.channel} into {m.branch}")
        body.append(v.named(sm.source, f"hotfix: {m.new} of channel {m.channel} merged into "
                                       f"branch {m.branch} at {(m.old or '')[:7]}"))
    trailers = f"Clmgit-Action: sync\nClmgit-Channel: {names}"
    if forced:
        trailers += "\nClmgit-Override: force"
    recorded = [*forced, *(sm.move for sm in merged)]
    if len(recorded) == 1:
        trailers += f"\nClmgit-Sha: {recorded[0].new}"
    body_text = "\n".join(body)
    return f"sync({names}): {'; '.join(said)}\n\n{body_text}\n\n{trailers}\n"
