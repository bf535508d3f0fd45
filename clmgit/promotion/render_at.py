"""Which cluster and which commit `clmgit render` renders."""

from __future__ import annotations

import dataclasses

from clmgit.errors import ConfigError, GitError, RefusedError
from clmgit.model import Cluster, config_version
from clmgit.promotion.promote import resolve_commit
from clmgit.workspace import Workspace


def resolve_render(ws: Workspace, *, cluster: str, channel: str | None,
                   sha: str | None) -> tuple[Cluster, str]:
    """The record (as if in `channel`, when given) and the SHA: `--sha`, else its pin."""
    if channel and sha:
        raise ConfigError("give --channel or --sha, not both")
    record = ws.cluster(cluster)
    if channel:
        record = dataclasses.replace(record, channel=ws.channel(channel).name)
    if sha and ws.sources.several:
        return record, _sources_version(ws, sha)
    if sha:
        return record, resolve_commit(ws, sha)
    pinned, reason = ws.pinned_sha(record)
    if pinned is None:
        raise RefusedError(f"cluster {record.id} has nothing to render: {reason}; pass --sha")
    return record, pinned


def _sources_version(ws: Workspace, spec: str) -> str:
    """`--sha main=<sha>;addons=<sha>` (or ','): a commit of every source, in any order."""
    given = dict(part.partition("=")[::2] for part in spec.replace(",", ";").split(";"))
    names = ws.sources.names
    if set(given) != set(names) or not all(given.values()):
        raise ConfigError(f"--sha {spec}: name a commit of every source, as "
                          + ";".join(f"{n}=SHA" for n in names))
    shas = []
    for name in names:
        repo = ws.source_repos.repo(name)
        full = repo.object_id(given[name])
        if full is None or repo.object_types([full]).get(full) != "commit":
            raise GitError(f"source {name!r}: commit {given[name]} does not exist in "
                           f"{repo.location}")
        shas.append((name, full))
    return config_version(shas)
