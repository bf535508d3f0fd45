"""What the promotion commands answer (docs/reference/output.md): one frozen dataclass per
result, whose fields are the keys of the document in their order. `clmgit.cli.output.to_data`
turns a result into data, and the table (`clmgit.cli.views`) reads the same object, so the two
cannot say different things. A `TABLE_ONLY` field is read by the table alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clmgit.cli.output import OMIT_EMPTY, TABLE_ONLY

if TYPE_CHECKING:
    from clmgit.adapters.github import PullRequest
    from clmgit.config.diff import ClusterDiff, FileDiff
    from clmgit.promotion.content import BranchMove, MoveKind
    from clmgit.promotion.pr import PullRequestResult
    from clmgit.promotion.preview import GroupPreview
    from clmgit.promotion.promote import GroupChange, Plan
    from clmgit.promotion.write import Landed, SourceMove


@dataclass(frozen=True, kw_only=True)
class _Proposal:
    """What a promotion or rollback answers first: how it ended and what it changes."""

    outcome: str
    action: str
    target: str
    source: str | None
    sha: str
    changes: tuple[GroupChange, ...]

    @property
    def verb(self) -> str:
        """How output names the action: promote, hotfix, roll back."""
        return "roll back" if self.action == "rollback" else self.action

    @property
    def shown_source(self) -> str:
        """" from SOURCE" after a group; nothing for a hotfix (its source is its target)."""
        return f" from {self.source}" if self.source and self.source != self.target else ""


@dataclass(frozen=True, kw_only=True)
class PlanOutcome(_Proposal):
    """A promotion or rollback (`kind: Plan`): the plan, and what landed of it; `outcome` is
    refused, dry-run or landed."""

    unchanged: tuple[str, ...]
    overrides: tuple[str, ...]
    branch_move: BranchMove | None
    source_moves: tuple[SourceMove, ...] = field(metadata=OMIT_EMPTY)
    commit: str | None
    pushed: bool
    message: str
    refusals: tuple[str, ...]
    notes: tuple[str, ...]
    #: Shortlog lines of what the change brings to cluster/.
    commits: tuple[str, ...] = field(metadata=TABLE_ONLY)
    #: The branch the commit landed on; None in a dry run.
    branch: str | None = field(metadata=TABLE_ONLY)

    @classmethod
    def of(cls, plan: Plan, landed: Landed | None) -> PlanOutcome:
        outcome = "refused" if plan.refusals else ("dry-run" if landed is None else "landed")
        return cls(outcome=outcome, action=plan.action, target=plan.target, source=plan.source,
                   sha=plan.sha, changes=plan.changes, unchanged=plan.unchanged,
                   overrides=plan.overrides, branch_move=plan.move,
                   source_moves=plan.source_moves, commit=landed.commit if landed else None,
                   pushed=bool(landed and landed.pushed), message=plan.message,
                   refusals=plan.refusals, notes=plan.notes, commits=plan.commits,
                   branch=landed.branch if landed else None)


@dataclass(frozen=True, kw_only=True)
class NothingToDo:
    """A promotion or rollback whose target is already where it would go (`kind: Plan`)."""

    outcome: str = field(default="nothing-to-do", init=False)
    action: str
    target: str
    sha: str

    @classmethod
    def of(cls, plan: Plan) -> NothingToDo:
        return cls(action=plan.action, target=plan.target, sha=plan.sha)


@dataclass(frozen=True, kw_only=True)
class PullRequestOutcome(_Proposal):
    """A promotion proposed as a pull request (`kind: PullRequest`); `outcome` is dry-run or
    pull-request."""

    overrides: tuple[str, ...]
    repository: str
    branch: str
    base: str
    base_sha: str
    commit: str | None
    pushed: bool
    pull_request: PullRequest | None
    created: bool
    branch_move_after_merge: BranchMove | None
    message: str
    refusals: tuple[str, ...]
    notes: tuple[str, ...]
    title: str = field(metadata=TABLE_ONLY)
    preview_error: str = field(metadata=TABLE_ONLY)

    @classmethod
    def of(cls, plan: Plan, r: PullRequestResult) -> PullRequestOutcome:
        return cls(outcome="dry-run" if r.pull is None else "pull-request", action=plan.action,
                   target=plan.target, source=plan.source, sha=plan.sha, changes=plan.changes,
                   overrides=plan.overrides, repository=r.repository, branch=r.branch,
                   base=r.base, base_sha=r.base_sha, commit=r.commit, pushed=r.pushed,
                   pull_request=r.pull, created=r.created, branch_move_after_merge=plan.move,
                   message=plan.message, refusals=plan.refusals, notes=plan.notes,
                   title=r.title, preview_error=r.preview_error)


@dataclass(frozen=True)
class DiffCommit:
    sha: str
    subject: str
    author: str
    date: str


@dataclass(frozen=True)
class DiffFile:
    path: str
    status: str  # added, removed or changed
    diff: str

    @classmethod
    def of(cls, f: FileDiff) -> DiffFile:
        return cls(f.path, f.status, f.text)


@dataclass(frozen=True)
class RenderedDiff:
    """One cluster's rendered manifests, old against new."""

    cluster: str
    old: str | None
    new: str
    files: tuple[DiffFile, ...]
    omitted: tuple[str, ...]
    note: str

    @classmethod
    def of(cls, r: ClusterDiff) -> RenderedDiff:
        return cls(r.cluster_id, r.old_sha, r.new_sha, tuple(map(DiffFile.of, r.files)),
                   r.omitted, r.note)


@dataclass(frozen=True)
class GroupDiff:
    """What a promotion would change in one group (`kind: DiffList`, an item)."""

    group: str
    old: str | None
    new: str
    forward: bool
    total: int
    commits: tuple[DiffCommit, ...]
    note: str
    rendered: RenderedDiff | None

    @classmethod
    def of(cls, p: GroupPreview) -> GroupDiff:
        commits = tuple(DiffCommit(c.sha, c.subject, c.author, c.date) for c in p.commits)
        return cls(p.group, p.old, p.new, p.forward, p.total, commits, p.note,
                   None if p.rendered is None else RenderedDiff.of(p.rendered))


@dataclass(frozen=True)
class SourcedMove:
    """A channel branch moved by `sync-branches` (`kind: BranchMoveList`, an item); `source`
    names the config source when there are several, else None."""

    source: str | None
    branch: str
    old: str | None
    new: str
    kind: MoveKind
    override: str

    @classmethod
    def of(cls, source: str | None, m: BranchMove) -> SourcedMove:
        return cls(source, m.branch, m.old, m.new, m.kind, m.override)
