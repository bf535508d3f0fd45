"""The engine in CLM's layout (`layout: clm`) on the in-memory doubles: stack names, tags,
protection, the etcd stack's policy, the order (etcd, main, cf-manifests, masters, workers),
Karpenter pools as manifests with their orphans removed, and taking over CLM's stacks."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from clmgit_sandbox.clmaccount import MemoryClmAccount
from clmgit_sandbox.doubles import (
    FakeClock,
    FakeKube,
    FakeNodePools,
    FakeStack,
    FakeStacks,
    StaticConfigSource,
)

from clmgit.config.values import placeholder_values
from clmgit.engine.clmstacks import ETCD_STACK_POLICY
from clmgit.engine.cluster import Backends, Engine
from clmgit.errors import ApplyError, ConfigError
from clmgit.layout import CLM_LAYOUT, DEFAULT, Layout
from clmgit.model import Cluster, NodePool
from tests.helpers.clm_layout import TREE, clm_cluster

SHA = "a" * 40
CLUSTER = clm_cluster("kube-1")
MAIN_TAGS = {f"kubernetes.io/cluster/{CLUSTER.id}": "owned",
             "cluster-lifecycle-controller.zalando.org/main-stack": "true"}


class World:
    def __init__(self, tree: dict[str, str] | None = None, layout: Layout = CLM_LAYOUT,
                 account: MemoryClmAccount | None = None) -> None:
        self.stacks = FakeStacks()
        self.pools = FakeNodePools(layout)
        self.kube = FakeKube()
        self.engine = Engine(StaticConfigSource({SHA: tree or TREE}), self.backends,
                             clock=FakeClock(), layout=layout, accounts=lambda cluster: account)

    def backends(self, cluster: Cluster) -> Backends:
        values = {k: v for k, v in placeholder_values(cluster).items() if k != "stack_outputs"}
        return Backends(self.stacks, self.pools, self.kube, values)

    def apply(self, cluster: Cluster = CLUSTER, **kwargs: Any) -> list[str]:
        return self.engine.apply(cluster, SHA, **kwargs).changes

    def kube_names(self, kind: str) -> list[str]:
        return sorted(name for (k, _, name) in self.kube.objects if k == kind)


def test_stacks_are_named_as_clm_names_them_and_applied_etcd_main_extras_masters_workers() -> None:
    world = World()
    world.apply()

    assert [name for op, name in world.stacks.calls if op == "create"] == [
        "etcd-kube-1",  # config item etcd_stack_name, from the defaults
        "kube-1",  # cluster/cluster.yaml
        "extra-kube-1",  # Metadata.StackName; the template that renders empty makes none
        f"nodepool-default-master-{CLUSTER.id.replace(':', '-')}",  # masters first
        f"nodepool-default-worker-{CLUSTER.id.replace(':', '-')}",
    ]


class UploadsInOrder(MemoryClmAccount):
    """An account whose uploads go into the stacks' call log (as ("upload", directory))."""

    log: list[tuple[str, str]] = []

    def put_object(self, bucket: str, key: str, body: bytes) -> None:
        super().put_object(bucket, key, body)
        self.log.append(("upload", key.split("/")[1]))


def test_generated_files_are_in_s3_before_the_stack_that_starts_their_instances() -> None:
    files = "files:\n  - {path: /etc/motd, data: aGVsbG8K, permissions: 0644}\n"
    tree = {**TREE, "cluster/etcd/files.yaml": files,
            "cluster/node-pools/master-default/files.yaml": files.replace("hello", "master"),
            "cluster/node-pools/worker-default/files.yaml": files}
    account = UploadsInOrder(keys={"alias/etcd-cluster": "arn:aws:kms:eu-central-1:1:key/e"})
    world = World(tree, account=account)
    account.log = world.stacks.calls

    world.apply(replace(CLUSTER, node_pools=tuple(
        replace(p, instance_types=("m5.large",)) for p in CLUSTER.node_pools)))

    pools = f"nodepool-default-%s-{CLUSTER.id.replace(':', '-')}"
    assert [(op, name) for op, name in world.stacks.calls if op in ("create", "upload")] == [
        ("upload", "etcd"), ("create", "etcd-kube-1"), ("create", "kube-1"),
        ("create", "extra-kube-1"), ("upload", "master"), ("create", pools % "master"),
        ("upload", "worker"), ("create", pools % "worker")]
    assert len(account.objects) == 3  # each uploaded once


def test_stacks_carry_clms_tags_only_and_are_all_protected() -> None:
    world = World()
    world.apply()
    stacks = world.stacks.stacks
    owned = {f"kubernetes.io/cluster/{CLUSTER.id}": "owned"}

    assert stacks["kube-1"].tags == {"InfrastructureComponent": "true", **MAIN_TAGS}
    assert stacks["etcd-kube-1"].tags == {"application": "kubernetes",
                                          "component": "etcd-cluster"}
    assert stacks["extra-kube-1"].tags == {"team": "teapot", **owned}
    assert stacks[f"nodepool-default-worker-{CLUSTER.id.replace(':', '-')}"].tags == {
        **owned, "kubernetes.io/role/node-pool": "true",
        "kubernetes.io/node-pool": "default-worker", "NodePool": "default-worker",
        "kubernetes.io/node-pool/profile": "worker-default"}
    assert all(s.protected for s in stacks.values())


def test_the_etcd_stack_gets_clms_policy_for_its_updates() -> None:
    world = World()
    world.apply()
    assert world.stacks.stacks["etcd-kube-1"].policy == ""  # CLM creates it without one

    changed = dict(TREE, **{"cluster/etcd/stack.yaml": TREE["cluster/etcd/stack.yaml"]
                            .replace("30", "60")})
    world.engine.source = StaticConfigSource({SHA: changed})
    world.apply()

    policy = json.loads(world.stacks.stacks["etcd-kube-1"].policy)
    assert policy == json.loads(ETCD_STACK_POLICY)
    denied = policy["Statement"][1]
    assert denied["Effect"] == "Deny" and denied["Action"] == ["Update:Replace", "Update:Delete"]
    assert "AWS::AutoScaling::AutoScalingGroup" in denied["Condition"]["StringEquals"][
        "ResourceType"]


def test_no_etcd_stack_on_eks_or_when_turned_off() -> None:
    eks = World()
    eks.apply(replace(CLUSTER, provider="zalando-eks", alias="kube-1-alias"))
    off = World(layout=Layout("clm", manage_etcd_stack=False))
    off.apply()

    assert "etcd-kube-1" not in eks.stacks.stacks
    assert "etcd-kube-1" not in off.stacks.stacks
    # On EKS, CLM manages no master pools and tags with the alias.
    assert [n for n in eks.stacks.stacks if "master" in n] == []
    worker = eks.stacks.stacks[f"nodepool-default-worker-{CLUSTER.id.replace(':', '-')}"]
    assert worker.tags["kubernetes.io/cluster/kube-1-alias"] == "owned"


def test_a_cluster_clm_created_is_taken_over_not_duplicated() -> None:
    world = World()
    world.apply()
    before = dict(world.stacks.stacks)
    world.stacks.calls.clear()

    again = World()
    again.stacks.stacks = before  # the stacks as CLM left them
    again.apply()

    assert set(again.stacks.stacks) == set(before)
    assert [c for c in again.stacks.calls if c[0] == "create"] == []


def test_karpenter_pools_are_applied_as_manifests_and_orphans_deleted() -> None:
    world = World()
    changes = world.apply(replace(CLUSTER, node_pools=(*CLUSTER.node_pools,
                                                       NodePool(name="karp2",
                                                                profile="worker-karpenter"))))
    assert world.kube_names("NodePool") == ["karp", "karp2"]
    assert world.kube_names("EC2NodeClass") == ["karp", "karp2"]
    assert not any("karp" in name for name in world.stacks.stacks)  # no stack for Karpenter
    assert "node pool karp: NodePool karp: created" in changes

    changes = world.apply()  # karp2 gone from the registry

    assert world.kube_names("NodePool") == ["karp"]
    assert world.kube_names("EC2NodeClass") == ["karp"]
    assert "Karpenter pool removed from the registry: deleted NodePool karp2" in changes


def test_a_pool_gone_from_the_registry_loses_its_protected_stack() -> None:
    world = World()
    world.apply()
    pool_stack = f"nodepool-default-worker-{CLUSTER.id.replace(':', '-')}"
    assert world.stacks.stacks[pool_stack].protected

    world.apply(replace(CLUSTER, node_pools=CLUSTER.node_pools[1:]))

    assert pool_stack not in world.stacks.stacks
    assert ("unprotect", pool_stack) in world.stacks.calls


def test_clms_cf_deletions_name_stacks_with_stack_name() -> None:
    world = World()
    # CLM protects every stack it makes, and lifts that to delete one.
    world.stacks.stacks["old-kube-1"] = FakeStack("", {}, protected=True)
    world.apply()
    assert "old-kube-1" not in world.stacks.stacks
    assert world.stacks.calls[:2] == [("unprotect", "old-kube-1"), ("delete", "old-kube-1")]


def test_a_cf_manifest_without_a_stack_name_is_refused_before_any_change() -> None:
    tree = dict(TREE, **{"cluster/cf-manifests/30-nameless.yaml": "Resources: {}\n"})
    world = World(tree)
    with pytest.raises(ConfigError, match="30-nameless.yaml names no stack"):
        world.apply()
    assert world.stacks.calls == []


def test_the_default_layout_does_not_read_clms_main_stack() -> None:
    world = World(layout=DEFAULT)
    with pytest.raises(ConfigError, match=r"cluster/stack.yaml is missing"):
        world.apply()


def test_a_failed_stack_stops_before_the_pools() -> None:
    world = World()
    world.stacks.failures["kube-1"] = "boom"
    with pytest.raises(ApplyError, match="boom"):
        world.apply()
    assert [name for _, name in world.stacks.calls] == ["etcd-kube-1"]


def test_decommission_deletes_clms_stacks_main_last_and_leaves_the_etcd_stack() -> None:
    world = World()
    world.apply()
    world.stacks.calls.clear()

    report = world.engine.decommission(CLUSTER)

    deleted = [name for op, name in world.stacks.calls if op == "delete"]
    assert deleted == [f"nodepool-default-master-{CLUSTER.id.replace(':', '-')}",
                       f"nodepool-default-worker-{CLUSTER.id.replace(':', '-')}",
                       "extra-kube-1", "kube-1"]
    assert list(world.stacks.stacks) == ["etcd-kube-1"]  # CLM does not delete it either
    assert "stack kube-1: deleted" in report.changes
