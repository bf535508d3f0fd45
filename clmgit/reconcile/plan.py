"""What a reconcile run does to each cluster, decided from the registry and the channels alone:
no checkout, no rendering, no cloud call — so a cluster already at its version costs a hash.

The version recorded for a cluster is `<sha>#<hash>`, the hash taken over the record *as it will
be when the run is done*: CLM's hash covers `lifecycle_status`, so a `requested` cluster is
recorded with the hash of its `ready` self, and the next run finds it in sync instead of
updating it a second time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from clmgit.errors import ConfigError
from clmgit.model import (
    CREATING,
    DECOMMISSION_REQUESTED,
    DECOMMISSIONED,
    READY,
    REQUESTED,
    UPDATE_BLOCK,
    Cluster,
    desired_version,
    with_lifecycle,
)

IN_SYNC = "in-sync"
CREATE = "create"
UPDATE = "update"
DECOMMISSION = "decommission"
BLOCKED = "blocked"

Pin = Callable[[Cluster], tuple[str | None, str]]  # (SHA or None, group or why there is none)


@dataclass(frozen=True)
class Target:
    cluster: Cluster
    action: str  # one of the constants above
    sha: str = ""
    version: str = ""  # what `current_version` becomes when the action succeeds
    reason: str = ""  # why a cluster is blocked

    @property
    def final_lifecycle(self) -> str:
        return DECOMMISSIONED if self.action == DECOMMISSION else final_lifecycle(self.cluster)


def final_lifecycle(cluster: Cluster) -> str:
    if cluster.lifecycle_status in (REQUESTED, CREATING):
        return READY
    if cluster.lifecycle_status == DECOMMISSION_REQUESTED:
        return DECOMMISSIONED
    return cluster.lifecycle_status


def applied_version(sha: str, cluster: Cluster) -> str:
    """What `current_version` becomes when `sha` is applied: the hash of the record as the run
    leaves it."""
    return desired_version(sha, with_lifecycle(cluster, final_lifecycle(cluster)))


def plan(cluster: Cluster, pin: Pin) -> Target:
    if cluster.lifecycle_status == DECOMMISSIONED:
        # Runs leave these out; one decommissioned since the run's start must not come back.
        return Target(cluster, BLOCKED, reason="it is decommissioned")
    if cluster.lifecycle_status == DECOMMISSION_REQUESTED:
        return Target(cluster, DECOMMISSION)
    if UPDATE_BLOCK in cluster.config_items:
        value = cluster.config_items[UPDATE_BLOCK]
        return Target(cluster, BLOCKED, reason=f"{UPDATE_BLOCK} is set" + (
            f": {value}" if value else ""))
    sha, why = pin(cluster)
    if sha is None:
        return Target(cluster, BLOCKED, reason=why)
    status = cluster.status
    # CLM counts a cluster as updating only while next_version names another version.
    if (status.next_version in ("", status.current_version)
            and status.current_version == desired_version(sha, cluster)):
        return Target(cluster, IN_SYNC, sha, status.current_version)
    action = CREATE if cluster.lifecycle_status in (REQUESTED, CREATING) else UPDATE
    return Target(cluster, action, sha, applied_version(sha, cluster))


def parse_shard(spec: str) -> tuple[int, int]:
    """`I/N` (0 <= I < N) from `--shard`."""
    index, slash, count = spec.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i, n = -1, 0
    if not slash or n < 1 or not 0 <= i < n:
        raise ConfigError(f"--shard {spec!r}: expected I/N with 0 <= I < N, such as 0/4")
    return i, n


def shard_of(cluster_id: str, count: int) -> int:
    """A stable shard for a cluster id: the same on every machine and Python version."""
    digest = hashlib.sha256(cluster_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def select(
    clusters: Iterable[Cluster],
    *,
    names: Sequence[str] = (),
    channel: str | None = None,
    shard: tuple[int, int] | None = None,
) -> list[Cluster]:
    """The clusters a run works on: not decommissioned, named by id or alias if any are named,
    of `channel` if given, in shard `I` of `N` if given. A name that matches nothing is an
    error: a typo must not turn into a run that does nothing and says it succeeded."""
    live = [c for c in clusters if c.lifecycle_status != DECOMMISSIONED]
    if names:
        wanted = set(names)
        live = [c for c in live if c.id in wanted or c.alias in wanted]
        found = {c.id for c in live} | {c.alias for c in live}
        missing = [n for n in names if n not in found]
        if missing:
            raise ConfigError(
                f"no cluster {missing[0]!r} in the registry (or it is decommissioned)")
    if channel:
        live = [c for c in live if c.channel == channel]
    if shard:
        index, count = shard
        live = [c for c in live if shard_of(c.id, count) == index]
    return live
