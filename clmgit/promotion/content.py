"""What a channel holds is its `cluster/` tree: containment, and moving a channel branch.

Real config repositories promote by merge commits, so a channel branch carries many commits
that are not on its source although its `cluster/` content came from there. A commit is
therefore *contained* in a SHA when it is an ancestor of it, or when its `cluster/` tree equals
the `cluster/` tree of some commit in the SHA's history. A branch is *at* a SHA when their
`cluster/` trees are equal.

Channel branches only ever move forward in git's sense (they are usually protected): by a
fast-forward when the branch is an ancestor of the new SHA, else by a promotion merge, a commit
whose parents are the branch head and the new SHA and whose tree is the new SHA's. A hotfix is
brought into an upstream branch by a hotfix merge: parents the branch head and the fix, tree
git's three-way merge of the two.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace

from clmgit.adapters.git import GitRepo

CONFIG_DIR = "cluster/"
_LISTED = 5  # commits and files named in a refusal


class MoveKind(enum.Enum):
    CREATE = "create"  # the branch does not exist yet
    FAST_FORWARD = "fast-forward"
    PROMOTION_MERGE = "promotion-merge"
    HOTFIX_MERGE = "hotfix-merge"


@dataclass(frozen=True)
class BranchMove:
    branch: str
    old: str | None
    new: str  # the SHA whose content the branch gets
    kind: MoveKind = MoveKind.FAST_FORWARD
    override: str = ""  # the refusal `--force` went past (what the move drops), recorded


@dataclass(frozen=True)
class HotfixMerge(BranchMove):
    """A hotfix (`new`, pinned in `channel`) merged into an upstream branch at `old`."""

    kind: MoveKind = MoveKind.HOTFIX_MERGE
    tree: str = ""  # the three-way merge of `old` and `new`
    channel: str = ""


@dataclass(frozen=True)
class PlannedMove:
    """A branch move, or None when the branch is already at the SHA; `refusal` says which
    content of the branch the move would drop."""

    move: BranchMove | None
    refusal: str | None = None

    def taken(self) -> BranchMove | None:
        """The move as made once allowed: a refused one (gone past with --force) carries its
        refusal, so that its promotion merge says what it dropped."""
        if self.move is None or not self.refusal:
            return self.move
        return replace(self.move, override=self.refusal)


def contains(repo: GitRepo, old: str, new: str) -> bool:
    if repo.is_ancestor(old, new):
        return True
    tree = repo.subtree(old, CONFIG_DIR)
    return tree is not None and tree in repo.subtrees_in_history(new, CONFIG_DIR)


def same_content(repo: GitRepo, a: str, b: str) -> bool:
    return a == b or repo.subtree(a, CONFIG_DIR) == repo.subtree(b, CONFIG_DIR)


def plan_branch_move(
    repo: GitRepo, branch: str, head: str | None, sha: str, *, known: Sequence[str] = ()
) -> PlannedMove:
    """Move `branch`, at `head` (None: it does not exist yet), to `sha`'s content. `known` are
    commits whose content may be left behind (a rollback leaves the pins it goes back from)."""
    if head is None:
        return PlannedMove(BranchMove(branch, None, sha, MoveKind.CREATE))
    if repo.is_ancestor(head, sha):
        return PlannedMove(None if head == sha else BranchMove(branch, head, sha))
    if same_content(repo, head, sha):
        return PlannedMove(None)
    move = BranchMove(branch, head, sha, MoveKind.PROMOTION_MERGE)
    if any(contains(repo, head, k) for k in (sha, *known)):
        return PlannedMove(move)
    return PlannedMove(move, _carried(repo, branch, head, sha))


def plan_hotfix_merge(repo: GitRepo, branch: str, head: str, fix: str, *,
                      channel: str) -> PlannedMove:
    """Merge the hotfix `fix` of `channel` into `branch` at `head`, unless the branch contains
    it already; a merge that conflicts is refused, naming the branch and the files."""
    if contains(repo, fix, head):
        return PlannedMove(None)
    tree, conflicts = repo.merge_tree(head, fix)
    refusal = None
    if conflicts:
        listed = ", ".join(conflicts[:_LISTED]) + (
            f" and {len(conflicts) - _LISTED} more" if len(conflicts) > _LISTED else "")
        refusal = (f"the hotfix {fix[:7]} of {channel!r} conflicts with branch {branch!r} at "
                   f"{head[:7]} in {listed}; merge it into {branch!r} by hand (a pull "
                   "request), then run sync-branches again")
    return PlannedMove(HotfixMerge(branch, head, fix, tree=tree, channel=channel), refusal)


def _carried(repo: GitRepo, branch: str, head: str, sha: str) -> str:
    """The sentence naming the commits and files of `branch` that `sha` does not have."""
    commits = repo.log([head, f"^{sha}"], paths=[CONFIG_DIR], limit=_LISTED + 1,
                       no_merges=True)
    touched = set(repo.changed_paths(repo.merge_base(head, sha) or sha, head, CONFIG_DIR))
    files = [f for f in repo.changed_paths(sha, head, CONFIG_DIR) if f in touched]
    named = ", ".join(f"{c.sha[:7]} {c.subject!r}" for c in commits[:_LISTED]) or "merges"
    if len(commits) > _LISTED:
        named += " and more"
    listed = ", ".join(files[:_LISTED]) + (f" and {len(files) - _LISTED} more"
                                           if len(files) > _LISTED else "")
    return (
        f"branch {branch!r} at {head[:7]} carries cluster/ content that {sha[:7]} does not "
        f"contain (commits {named}; files {listed or 'none'}); moving it would drop them "
        "(--force overrides)"
    )
