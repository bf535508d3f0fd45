"""Which cluster and which commit `clmgit render` renders."""

from __future__ import annotations

import dataclasses

from clmgit.errors import ConfigError, RefusedError
from clmgit.model import Cluster
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
        return record, _version(ws, sha)
    pinned, reason = ws.pinned_sha(record)
    if pinned is None:
        raise RefusedError(f"cluster {record.id} has nothing to render: {reason}; pass --sha")
    return record, pinned


def _version(ws: Workspace, spec: str) -> str:
    """`--sha`: a commit, or with several sources `main=<sha>;addons=<sha>` (or ','): a commit
    of every source, in any order."""
    v = ws.versions
    if len(v.names) == 1 and "=" not in spec:
        given = {v.names[0]: spec}
    else:
        given = dict(part.partition("=")[::2] for part in spec.replace(",", ";").split(";"))
    if set(given) != set(v.names) or not all(given.values()):
        raise ConfigError(f"--sha {spec}: name a commit of every source, as "
                          + ";".join(f"{n}=SHA" for n in v.names))
    return v.version({n: v.resolve(n, given[n]) for n in v.names})
