"""The `Registry` seam and what its two kinds share: the lease errors, the lease length and
the holder names of a run. The package (`clmgit.registry`) opens a registry by location; its
kinds import this module, never the package, so the package and its kinds do not import each
other.
"""

from __future__ import annotations

from typing import Protocol

from clmgit.errors import RegistryError
from clmgit.machine import process_is_gone, process_namespace
from clmgit.model import Cluster, ClusterStatus, Health

#: How long a lease lasts unless renewed; reconcile renews it while it works on a cluster.
DEFAULT_LEASE_SECONDS = 15 * 60


class LeaseLost(RegistryError):
    """The lease of a cluster is held by someone else now; the caller must stop working on it."""


class RegistryUnavailable(RegistryError):
    """The registry could not be reached or answered that it cannot serve now (5xx, 429): the
    same request may succeed later, where a refusal would not."""


class Registry(Protocol):
    """Lists clusters; records what was applied to them, under a lease per cluster.

    A `clusters.yaml` file (`clmgit.registry.file`) and CLM's HTTP Cluster Registry API
    (`clmgit.registry.http`) stand behind it, and reconcile uses both the same way
    (docs/explanation/reconcile.md): `clusters()` lists every record, and clusters already at
    their desired version are skipped with no further call (the cheap no-op path); `acquire`
    takes a cluster's lease, `record` writes what was applied under it, and `record_health`
    writes the health verdict without one.
    """

    #: Where the registry is, for messages (a path or a URL without credentials).
    location: str

    def clusters(self) -> list[Cluster]:
        """Every record, in registry order."""
        ...

    def acquire(self, cluster_id: str, holder: str, ttl: float) -> Cluster | None:
        """Take or renew the lease of `cluster_id` for `ttl` seconds — free, expired, or already
        `holder`'s — and return the record as it is now (another reconciler may have just
        finished it); None if another holder has an unexpired lease. Taking is a compare-and-set:
        of many callers at once, exactly one wins. An unknown id raises `RegistryError`."""
        ...

    def record(
        self,
        cluster_id: str,
        holder: str,
        *,
        status: ClusterStatus | None = None,
        lifecycle_status: str | None = None,
        release: bool = False,
    ) -> None:
        """Write what is given (None: leave as it is) while `holder` holds the lease, and with
        `release` give the lease up in the same write. A holder whose lease was taken over
        meanwhile gets `LeaseLost` and nothing is written."""
        ...

    def record_health(self, cluster_id: str, health: Health) -> None:
        """Write `status.health` of the record as it is now, nothing else, with no lease:
        observing health must never keep a reconciler away."""
        ...


def new_holder() -> str:
    """A lease holder name for this run: `host/pid/nonce`, and where this machine can tell
    `/boot-id:pid-namespace` (see `holder_is_dead`)."""
    import os
    import socket
    import uuid

    holder = f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"
    identity = process_namespace()
    return f"{holder}/{identity}" if identity else holder


def holder_is_dead(holder: str) -> bool:
    """Whether `holder` names a process that is known to be gone: one started since this
    machine booted, in this PID namespace, whose pid no longer exists (killed runs leave their
    leases behind; there is no need to wait for those to expire). A holder of another boot or
    namespace, or one that does not say (older clmgit), is never judged dead here: its lease
    is taken only when it expires."""
    parts = holder.split("/")
    if len(parts) != 4 or not parts[1].isdigit():
        return False
    return process_is_gone(int(parts[1]), parts[3])
