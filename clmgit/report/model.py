"""The report's data: plain frozen values that the HTML page, the Markdown and the page's inline
JSON are all rendered from.

Fields that later features fill in (a cluster's `health`, a group's health gate) are optional:
None is shown as "—", so a report without them stays complete.
"""

from __future__ import annotations

from dataclasses import dataclass

from clmgit.promotion.history import Entry

#: What the page and the Markdown show for a value that is absent.
ABSENT = "—"


@dataclass(frozen=True)
class GroupView:
    """One group of a channel in the pipeline (a channel without groups has one, named after
    the default group, at its branch head)."""

    name: str
    pinned_sha: str | None
    promoted_at: str
    clusters: int
    states: dict[str, int]
    #: What `promote SOURCE CHANNEL --group NAME` would pin now, and the planner's verdict.
    next_sha: str | None
    gate: str  # open, up to date, refused, no source, error
    refusals: tuple[str, ...]
    #: Commits to cluster/ between the pin and `next_sha` (None: no source to be behind).
    behind: int | None
    #: (clusters of the source that applied next_sha, running clusters of the source), when the
    #: channel has the applied_in_source gate.
    applied_in_source: tuple[int, int] | None
    #: How long next_sha must still soak in the source ("0s": done), with a soak gate.
    soak_left: str | None
    #: The health gate's verdict, once health is recorded (None: not available).
    health: str | None = None


@dataclass(frozen=True)
class ChannelView:
    name: str
    branch: str
    source: str | None
    pinned: bool
    frozen: bool
    freeze_reason: str
    groups: tuple[GroupView, ...]
    #: "closed until <ISO 8601>" while its promotion windows are closed (clmgit/windows.py).
    window: str = ""


@dataclass(frozen=True)
class ClusterRow:
    id: str
    alias: str
    environment: str
    channel: str
    group: str
    desired_sha: str | None
    applied_sha: str
    state: str
    reason: str
    applied_at: str
    problems: tuple[str, ...]
    #: The cluster's health verdict, once recorded (None: not available).
    health: str | None = None


@dataclass(frozen=True)
class Column:
    """A column of the matrix: a group of a channel."""

    channel: str
    group: str


@dataclass(frozen=True)
class Cell:
    pinned: bool
    applied: int  # clusters of the group whose applied commit contains the change
    clusters: int
    healthy: int | None = None  # once health is recorded


@dataclass(frozen=True)
class Change:
    """A commit to cluster/ and where it is: one cell per matrix column."""

    sha: str
    subject: str
    author: str
    date: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Report:
    generated_at: str
    repository: str
    control_branch: str
    control_sha: str
    #: `<forge>/<owner>/<repo>/commit/` when origin is on GitHub, else None.
    commit_url: str | None
    channels: tuple[ChannelView, ...]
    columns: tuple[Column, ...]
    changes: tuple[Change, ...]
    clusters: tuple[ClusterRow, ...]
    states: dict[str, int]
    history: tuple[Entry, ...]
    #: What each override in the history lifted, by commit ("--force: <the refusal>").
    override_reasons: dict[str, tuple[str, ...]]

    def link(self, sha: str | None) -> str | None:
        return f"{self.commit_url}{sha}" if sha and self.commit_url else None
