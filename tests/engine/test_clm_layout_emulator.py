"""CLM's Karpenter pools through the real Kubernetes adapter against the emulator: the
manifests install Karpenter's CRDs, each pool's `provisioners.yaml` is applied after them, and
the NodePool and EC2NodeClass of a pool removed from the registry are deleted."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from clmgit_sandbox.doubles import FakeClock, FakeNodePools, FakeStacks, StaticConfigSource
from clmgit_sandbox.kubeapi import KubeAPIServer
from kubernetes import client

from clmgit.adapters.kube import KubeAPI
from clmgit.config.values import placeholder_values
from clmgit.engine.cluster import Backends, Engine
from clmgit.engine.karpenter import remove_orphans
from clmgit.layout import CLM_LAYOUT
from clmgit.model import Cluster, NodePool
from tests.helpers.clm_layout import TREE, clm_cluster

SHA = "b" * 40


@pytest.fixture
def kube(api_client: client.ApiClient) -> Iterator[KubeAPI]:
    yield KubeAPI(api_client, clock=FakeClock())


def names(server: KubeAPIServer, api_version: str, kind: str) -> list[str]:
    return sorted(o["metadata"]["name"] for o in server.objects(api_version, kind))


def test_karpenter_pools_applied_and_orphans_deleted_on_the_emulator(
    kube: KubeAPI, kube_server: KubeAPIServer
) -> None:
    stacks = FakeStacks()

    def backends(cluster: Cluster) -> Backends:
        values = {k: v for k, v in placeholder_values(cluster).items() if k != "stack_outputs"}
        return Backends(stacks, FakeNodePools(CLM_LAYOUT), kube, values)

    engine = Engine(StaticConfigSource({SHA: TREE}), backends, clock=FakeClock(),
                    layout=CLM_LAYOUT)
    cluster = clm_cluster("kube-e1", karpenter=("karp-a", "karp-b"))

    # A dry run before Karpenter's CRDs exist: the manifests would create them first.
    first = engine.apply(cluster, SHA, dry_run=True)
    assert "node pool karp-a: NodePool karp-a: would create" in first.changes
    assert names(kube_server, "apiextensions.k8s.io/v1", "CustomResourceDefinition") == []

    engine.apply(cluster, SHA)
    assert names(kube_server, "karpenter.sh/v1", "NodePool") == ["karp-a", "karp-b"]
    assert names(kube_server, "karpenter.k8s.aws/v1", "EC2NodeClass") == ["karp-a", "karp-b"]

    dry = engine.apply(replace(cluster, node_pools=(
        *cluster.node_pools[:2], NodePool(name="karp-a", profile="worker-karpenter"))),
        SHA, dry_run=True)
    assert "Karpenter pool removed from the registry: would delete NodePool karp-b" in dry.changes
    assert names(kube_server, "karpenter.sh/v1", "NodePool") == ["karp-a", "karp-b"]

    engine.apply(replace(cluster, node_pools=(
        *cluster.node_pools[:2], NodePool(name="karp-a", profile="worker-karpenter"))), SHA)
    assert names(kube_server, "karpenter.sh/v1", "NodePool") == ["karp-a"]
    assert names(kube_server, "karpenter.k8s.aws/v1", "EC2NodeClass") == ["karp-a"]


def test_a_cluster_without_karpenter_has_nothing_to_clean_up(kube: KubeAPI) -> None:
    assert remove_orphans(kube, set()) == []
