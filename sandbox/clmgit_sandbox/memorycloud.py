"""In-memory backends that the sandbox's `cluster/` tree (`clmgit_sandbox.configtree`) applies to
in full: the doubles of `clmgit_sandbox.doubles`, with the stack output its manifests read and
the kinds they create. For tests and benchmarks that run many engines at once without moto or
the Kubernetes emulator."""

from __future__ import annotations

from clmgit.config.values import STACK_OUTPUTS, placeholder_values
from clmgit.engine.cluster import Backends
from clmgit.engine.kube import Kind
from clmgit.model import Cluster
from clmgit_sandbox.doubles import FakeKube, FakeNodePools, FakeStacks

#: What the sandbox tree applies, besides what FakeKube serves already.
KINDS = (*FakeKube.KINDS, Kind("v1", "ServiceAccount", True, "serviceaccounts"),
         Kind("v1", "ConfigMap", True, "configmaps"), Kind("v1", "Secret", True, "secrets"),
         Kind("apps/v1", "Deployment", True, "deployments"),
         Kind("apps/v1", "DaemonSet", True, "daemonsets"))


def memory_backends(cluster: Cluster) -> Backends:
    """A new in-memory cloud and cluster for `cluster`, as the sandbox tree expects them."""
    stacks = FakeStacks(outputs={
        cluster.local_id: {"AuditLogBucket": f"audit-{cluster.local_id}"}})
    values = {k: v for k, v in placeholder_values(cluster).items() if k != STACK_OUTPUTS}
    return Backends(stacks, FakeNodePools(), FakeKube(KINDS), values)
