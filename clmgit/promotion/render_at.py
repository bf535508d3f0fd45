"""Which cluster and which commit `clmgit render` renders."""

from __future__ import annotations

import dataclasses

from clmgit.errors import ConfigError, RefusedError
from clmgit.model import Cluster
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
    if sha:
        return record, resolve_commit(ws, sha)
    pinned, reason = ws.pinned_sha(record)
    if pinned is None:
        raise RefusedError(f"cluster {record.id} has nothing to render: {reason}; pass --sha")
    return record, pinned
