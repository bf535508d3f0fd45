"""Which cluster and which commit `clmgit render` renders."""

from __future__ import annotations

from clmgit.errors import ConfigError, RefusedError
from clmgit.model import Cluster, replace_channel
from clmgit.promotion.promote import resolve_commit
from clmgit.workspace import Workspace


def find_cluster(ws: Workspace, name: str) -> Cluster:
    for c in ws.clusters:
        if name in (c.id, c.alias):
            return c
    raise ConfigError(f"no cluster {name!r} in the registry {ws.registry.location}")


def resolve_render(ws: Workspace, *, cluster: str, channel: str | None,
                   sha: str | None) -> tuple[Cluster, str]:
    """The record (as if in `channel`, when given) and the SHA: `--sha`, else its pin."""
    if channel and sha:
        raise ConfigError("give --channel or --sha, not both")
    record = find_cluster(ws, cluster)
    if channel:
        record = replace_channel(record, ws.channel(channel).name)
    if sha:
        return record, resolve_commit(ws, sha)
    pinned, reason = ws.pinned_sha(record)
    if pinned is None:
        raise RefusedError(f"cluster {record.id} has nothing to render: {reason}; pass --sha")
    return record, pinned
