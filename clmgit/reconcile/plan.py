"""What a reconcile run does to each cluster, decided from the registry and the channels alone:
no checkout, no rendering, no cloud call — so a cluster already at its version costs a hash.

The version recorded for a cluster is `<sha>#<hash>`, the hash taken over the record *as it will
be when the run is done*: CLM's hash covers `lifecycle_status`, so a `requested` cluster is
recorded with the hash of its `ready` self, and the next run finds it in sync instead of
updating it a second time.
"""

from __future__ import annotations

import hashlib
import struct
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
#: Outside its maintenance window (clmgit/reconcile/maintenance.py); also the outcome.
WAITING = "waiting"

Pin = Callable[[Cluster], tuple[str | None, str]]  # (SHA or None, group or why there is none)


@dataclass(frozen=True)
class Target:
    cluster: Cluster
    action: str  # one of the constants above
    sha: str = ""
    version: str = ""  # what `current_version` becomes when the action succeeds
    #: Why a cluster is blocked or waiting, or why one in sync is left alone (no longer asked
    #: for); a cluster with no work and a reason is reported as skipped.
    reason: str = ""

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
        # Nothing is left undone: it is not blocked.
        return Target(cluster, IN_SYNC, reason="it is decommissioned")
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


def assign_shards(cluster_ids: Iterable[str], count: int) -> dict[str, int]:
    """Each cluster's shard of `count`, balanced and stable: the same on every machine and
    Python version, as even as can be (no shard has more than ceil(M/N) of M clusters), and
    a cluster that comes or goes moves few others.

    Rendezvous hashing with bounded loads: every cluster ranks the shards by a hash of (its
    id, the shard), and the clusters, taken in the order of a hash of their id, each take the
    first shard of their ranking that is not full yet. A plain hash of the id leaves shards up
    to a third above the mean on fleets of a few hundred clusters."""
    ranked = sorted((_ranks(i, count), i) for i in set(cluster_ids))
    capacity = -(-len(ranked) // count) if ranked else 0
    load = [0] * count
    shards: dict[str, int] = {}
    for ranks, cluster_id in ranked:
        first = ranks.index(max(ranks))
        if load[first] >= capacity:  # rare: only near the end, when shards fill up
            first = next(k for k in sorted(range(count), key=ranks.__getitem__, reverse=True)
                         if load[k] < capacity)
        load[first] += 1
        shards[cluster_id] = first
    return shards


def _ranks(cluster_id: str, count: int) -> tuple[int, ...]:
    """A 32-bit hash of (cluster, shard) for every shard, from one call of SHAKE-128. (Equal
    values are rare; the lower shard wins them.) The tuple also orders the clusters."""
    return struct.unpack(f">{count}I", hashlib.shake_128(cluster_id.encode()).digest(4 * count))


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
    # Shards are drawn over the whole live fleet, before any other filter, so that the jobs
    # of a matrix agree on them whatever else they select.
    shards = assign_shards((c.id for c in live), shard[1]) if shard else {}
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
        live = [c for c in live if shards[c.id] == shard[0]]
    return live
