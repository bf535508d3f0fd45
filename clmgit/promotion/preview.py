"""What a promotion would bring, per target group: the commits to `cluster/` it adds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clmgit.adapters.git import Commit
from clmgit.errors import ConfigError
from clmgit.promotion.channels import DEFAULT_GROUP, Group
from clmgit.promotion.promote import CONFIG_DIR, source_sha
from clmgit.workspace import Workspace

PREVIEW_LIMIT = 200


@dataclass(frozen=True)
class GroupPreview:
    group: str
    old: str | None
    new: str
    commits: tuple[Commit, ...]
    total: int  # commits in old..new that touch cluster/ (may exceed len(commits))
    forward: bool  # False: the new SHA does not contain the old one


def preview(
    ws: Workspace,
    *,
    source: str,
    target: str,
    groups: Sequence[str] = (),
    cluster: str | None = None,
    sha: str | None = None,
) -> list[GroupPreview]:
    src, dst = ws.channel(source), ws.channel(target)
    new = source_sha(ws, src, sha)
    selected: Sequence[Group] = dst.select(groups) if dst.groups else (Group(DEFAULT_GROUP),)
    if cluster:
        record = ws.cluster(cluster)
        group = dst.group_for(record) if dst.groups else Group(DEFAULT_GROUP)
        if group is None:
            raise ConfigError(f"cluster {cluster!r} is in no group of channel {dst.name!r}")
        selected = (group,)
    out = []
    for g in selected:
        old = g.sha
        forward = old is None or ws.repo.is_ancestor(old, new)
        rev_range = f"{old}..{new}" if old and forward else new
        commits = tuple(ws.repo.log(rev_range, paths=[CONFIG_DIR], limit=PREVIEW_LIMIT))
        total = len(commits)
        if total == PREVIEW_LIMIT:
            total = ws.repo.count(rev_range, paths=[CONFIG_DIR])
        out.append(GroupPreview(g.name, old, new, commits, total, forward))
    return out
