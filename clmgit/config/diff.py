"""What a promotion changes for a cluster: the unified diff of its rendered files (stacks, node-pool
stacks, deletion lists, one file per manifest object) between two SHAs, secrets masked.

Files are matched by their path in the `output` layout, which names objects by kind, namespace
and name, so moving an object between files or reordering documents is no change.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from clmgit.config.offline import preview_account
from clmgit.config.output import RenderedFile, rendered_files
from clmgit.config.render import render_cluster
from clmgit.config.secrets import masker_for
from clmgit.config.source import ConfigSource
from clmgit.errors import ClmgitError
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster

ADDED, REMOVED, CHANGED = "added", "removed", "changed"


@dataclass(frozen=True)
class FileDiff:
    path: str
    status: str  # added, removed or changed
    text: str  # the unified diff


@dataclass(frozen=True)
class ClusterDiff:
    cluster_id: str
    label: str  # what the cluster stands for: its group, or its own id
    old_sha: str | None
    new_sha: str
    files: tuple[FileDiff, ...]
    note: str = ""
    omitted: tuple[str, ...] = ()  # changed files left out by `capped`

    @property
    def changed(self) -> bool:
        return bool(self.files or self.omitted)

    def capped(self, limit: int) -> ClusterDiff:
        """At most about `limit` characters of diff: whole files while they fit, the first that
        does not cut at a line, the rest only named. A promotion that rewrites every manifest
        must not make a preview (or a pull-request body) unreadable."""
        kept: list[FileDiff] = []
        used = 0
        for number, f in enumerate(self.files):
            if used + len(f.text) > limit:
                room = f.text.rfind("\n", 0, max(limit - used, 0)) + 1
                if room:
                    kept.append(FileDiff(f.path, f.status, f.text[:room]))
                left = tuple(x.path for x in self.files[number + (1 if room else 0):])
                cut = f"the diff is cut at {limit:,} characters"
                more = f"; {len(left)} more changed file(s) not shown" if left else ""
                note = "; ".join(n for n in (self.note, cut + more) if n)
                return replace(self, files=tuple(kept), note=note, omitted=left)
            kept.append(f)
            used += len(f.text)
        return self

    def text(self) -> str:
        old = self.old_sha[:7] if self.old_sha else "nothing"
        lines = [f"# {self.label}: cluster {self.cluster_id}, {old} → {self.new_sha[:7]}\n"]
        if self.note:
            lines.append(f"# {self.note}\n")
        if not self.changed:
            lines.append("# no change to the rendered stacks and manifests\n")
        lines += [f.text for f in self.files]
        return "".join(lines)


def rendered_diff(source: ConfigSource, cluster: Cluster, *, old_sha: str | None, new_sha: str,
                  label: str = "", values: Mapping[str, Any] | None = None,
                  context_lines: int = 3, layout: Layout = DEFAULT) -> ClusterDiff:
    """The diff of `cluster`'s rendered files from `old_sha` (None: nothing yet) to `new_sha`.

    A template error at `new_sha` raises; one at `old_sha` (which is already out there) only
    shows everything as added, with a note saying why.
    """
    label = label or cluster.id
    if old_sha == new_sha:
        return ClusterDiff(cluster.id, label, old_sha, new_sha, ())
    account = preview_account(cluster, layout)
    new = render_cluster(source, new_sha, cluster, values=values, layout=layout, account=account)
    old_files: list[RenderedFile] = []
    note = ""
    clusters = [new.cluster]
    if old_sha is not None:
        try:
            old = render_cluster(source, old_sha, cluster, values=values, layout=layout,
                                 account=account)
        except ClmgitError as e:
            note = f"rendering {old_sha[:7]} failed, so everything shows as added: {e}"
        else:
            old_files = rendered_files(old, mask=False)
            clusters.append(old.cluster)
    mask = masker_for(*clusters)
    diffs = diff_files(old_files, rendered_files(new, mask=False), context_lines=context_lines)
    masked = tuple(FileDiff(d.path, d.status, mask(d.text)) for d in diffs)
    return ClusterDiff(cluster.id, label, old_sha, new_sha, masked, mask(note))


def diff_files(old: list[RenderedFile], new: list[RenderedFile], *,
               context_lines: int = 3) -> list[FileDiff]:
    """Unified diffs of the files that differ: in the new files' order, then removed ones."""
    before = {f.path: f.text for f in old}
    after = {f.path: f.text for f in new}
    paths = list(after) + [p for p in before if p not in after]
    diffs = []
    for path in paths:
        a, b = before.get(path), after.get(path)
        if a == b:
            continue
        status = ADDED if a is None else REMOVED if b is None else CHANGED
        lines = difflib.unified_diff(
            (a or "").splitlines(keepends=True), (b or "").splitlines(keepends=True),
            fromfile="/dev/null" if a is None else f"a/{path}",
            tofile="/dev/null" if b is None else f"b/{path}", n=context_lines,
        )
        diffs.append(FileDiff(path, status, "".join(lines)))
    return diffs
