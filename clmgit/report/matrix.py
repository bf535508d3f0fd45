"""The commit x channel/group matrix: for each of the last changes to cluster/ on the pipeline's
first branch, which groups are pinned to a commit that contains it and how many of their
clusters have applied it ("where is my change now?"). With several config sources, the changes
are the main source's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from clmgit.adapters.git import GitRepo
from clmgit.channels import DEFAULT_GROUP
from clmgit.healthstate import HEALTHY
from clmgit.model import SHA_RE
from clmgit.promotion.content import CONFIG_DIR
from clmgit.promotion.status import ClusterState, GroupRow
from clmgit.report.model import Cell, Change, Column
from clmgit.workspace import Workspace


def matrix(ws: Workspace, rows: Sequence[GroupRow], states: Sequence[ClusterState], *,
           limit: int) -> tuple[tuple[Column, ...], tuple[Change, ...]]:
    columns = tuple(Column(r.channel, r.group) for r in rows)
    v = ws.versions
    main = v.names[0]
    repo = v.repo(main)
    first = next(iter(ws.channels.values()))
    commits = repo.log(v.head(first)[main], paths=[CONFIG_DIR], limit=limit) if limit else []
    if not commits:
        return columns, ()
    window = _Reach(repo, [c.sha for c in commits])

    def reach(version: str | None) -> frozenset[str]:
        return window((v.pins(version) or {}).get(main))

    applied: dict[tuple[str, str], Counter[str]] = {}
    healthy: dict[tuple[str, str], Counter[str]] = {}  # of the groups with any verdict
    for s in states:
        key = (s.channel, s.group or DEFAULT_GROUP)
        applied.setdefault(key, Counter())[s.applied_sha] += 1
        if s.health:
            healthy.setdefault(key, Counter())[s.applied_sha] += s.health == HEALTHY
    changes = []
    for c in commits:
        cells = []
        for r in rows:
            counts = applied.get((r.channel, r.group), Counter())
            well = healthy.get((r.channel, r.group))
            cells.append(Cell(
                pinned=c.sha in reach(r.pinned_sha),
                applied=sum(n for sha, n in counts.items() if c.sha in reach(sha)),
                clusters=sum(counts.values()),
                # of the clusters that applied the change, those that run it healthy
                healthy=None if well is None else sum(
                    n for sha, n in well.items() if c.sha in reach(sha)),
            ))
        changes.append(Change(c.sha, c.subject, c.author, c.date, tuple(cells)))
    return columns, tuple(changes)


class _Reach:
    """Which commits of the window each commit contains, by one `rev-list` per distinct commit
    that stops at the window's oldest change (so a long history is never walked)."""

    def __init__(self, repo: GitRepo, window: Sequence[str]) -> None:
        self.repo, self.window = repo, frozenset(window)
        parents = repo.run("rev-list", "--parents", "-n1", window[-1]).split()[1:]
        self._stop = [f"^{p}" for p in parents]
        self._known: dict[str, frozenset[str]] = {}

    def __call__(self, sha: str | None) -> frozenset[str]:
        if not sha or not SHA_RE.fullmatch(sha):  # "" (never applied) or not a commit id
            return frozenset()
        if sha not in self._known:
            # An applied commit the repository lacks (exit code 128) contains nothing known.
            out = self.repo.run("rev-list", sha, *self._stop, "--", ok=(0, 128))
            self._known[sha] = self.window.intersection(out.split())
        return self._known[sha]
