"""`clmgit diff` with several config sources: per target group, the commits to `cluster/` of
each source between the group's pins and the new ones (subjects prefixed with the source's
name), and the rendered diff of the composed configuration of one cluster of the group."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from clmgit.adapters.git import Commit
from clmgit.channels import group_pins
from clmgit.config.composed import workspace_source
from clmgit.model import config_version
from clmgit.promotion.content import CONFIG_DIR
from clmgit.promotion.preview import (
    PREVIEW_LIMIT,
    RENDERED_LIMIT,
    GroupPreview,
    _rendered,
    _representative,
    _selection,
)
from clmgit.promotion.sources import source_sha_of
from clmgit.workspace import Workspace


def preview_sources(ws: Workspace, *, source: str, target: str, groups: Sequence[str] = (),
                    cluster: str | None = None, shas: Mapping[str, str] | None = None,
                    rendered_limit: int = RENDERED_LIMIT) -> list[GroupPreview]:
    sources, repos = ws.sources, ws.source_repos
    src, dst = ws.channel(source), ws.channel(target)
    new = {s.name: source_sha_of(repos, s.name, s.branch(src), src, sources,
                                 (shas or {}).get(s.name)) for s in sources.sources}
    version = config_version(list(new.items()))
    selected, chosen = _selection(ws, dst, groups, cluster)
    config = workspace_source(sources, repos.repo, follow_symlinks=ws.layout.clm)
    out = []
    for g in selected:
        old = group_pins(g, sources) if dst.groups else {
            s.name: repos.head(s.name, s.branch(dst)) for s in sources.sources}
        commits: list[Commit] = []
        forward = True
        for name, sha in new.items():
            repo, was = repos.repo(name), (old or {}).get(name)
            ahead = was is None or repo.is_ancestor(was, sha)
            forward = forward and ahead
            rev_range = f"{was}..{sha}" if was and ahead else sha
            commits += [Commit(c.sha, f"{name}: {c.subject}", c.author, c.date)
                        for c in repo.log(rev_range, paths=[CONFIG_DIR], limit=PREVIEW_LIMIT)]
        was_version = config_version(list(old.items())) if old else None
        record = chosen or _representative(ws, dst, g)
        diff, note = _rendered(config, record, dst, g, old=was_version, new=version,
                               layout=ws.layout)
        out.append(GroupPreview(g.name, was_version, version, tuple(commits), len(commits),
                                forward, diff and diff.capped(rendered_limit), note))
    return out
