"""The engine as reconcile drives it: `ClusterEngine`, the one seam between a run
(`clmgit.reconcile.run.Reconciler`, its forked workers in `clmgit.reconcile.workers`) and the
engine (`clmgit.engine.cluster.Engine`, or a test's in-memory stand-in)."""

from __future__ import annotations

from typing import Protocol

from clmgit.model import Cluster


class ChangeReport(Protocol):
    """What the engine did (or, in a dry run, would do) to one cluster, as lines for people."""

    changes: list[str]


class ClusterEngine(Protocol):
    """Brings one cluster to a SHA of the config, or takes it down."""

    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> ChangeReport: ...

    def decommission(self, cluster: Cluster, *, dry_run: bool = False) -> ChangeReport: ...
