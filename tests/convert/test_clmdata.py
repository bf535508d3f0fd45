"""What `convert --check` renders with without a registry or AWS: the sample clusters, and the
stand-in for a cluster's account through which the project computes CLM's values."""

from __future__ import annotations

import base64
from dataclasses import replace

from clmgit.config.computed import ClmSession
from clmgit.config.offline import OfflineAccount, OfflineEc2
from clmgit.convert.clmdata import registry_items, sample_clusters, tree_profiles, variant_pools


def test_sample_clusters_cover_the_trees_profiles_and_keep_a_spot_pool() -> None:
    clusters = sample_clusters("dev", frozenset({"worker-combined", "master-default"}))
    assert [c.environment for c in clusters] == ["test", "production", "e2e"]
    pools = [(p.name, p.profile, p.discount_strategy) for p in clusters[0].node_pools]
    assert pools == [("default-master", "master-default", "none"),
                     ("pool-worker-combined", "worker-combined", "none"),
                     ("spot", "worker-combined", "spot")]
    assert clusters[0].config_items == registry_items()
    assert "vpc_id" not in registry_items()  # discovered, as from a real account


def test_the_account_stand_in_answers_from_the_record() -> None:
    secret = "aws:kms:" + base64.b64encode(b"ciphertext").decode()
    cluster = replace(sample_clusters()[0], config_items={
        "subnets": "subnet-1,subnet-2", "token": secret})
    clm = ClmSession(cluster, OfflineAccount(cluster, OfflineEc2()))
    values = clm.values({})
    assert values["subnets"] == {"eu-central-1a": "subnet-1", "eu-central-1b": "subnet-2",
                                 "*": "subnet-1,subnet-2"}
    assert clm.items()["token"] == secret  # no KMS: read as written
    assert clm.items()["vpc_id"].startswith("vpc-")
    assert values["load_balancer_certificate"].startswith(
        "arn:aws:acm:eu-central-1:123456789012:certificate/")
    assert values["vpc_ipv4_cidr"] == "172.31.0.0/16"


def test_without_the_subnets_item_each_zone_of_the_region_has_one() -> None:
    cluster = sample_clusters()[1]
    values = ClmSession(cluster, OfflineAccount(cluster, OfflineEc2())).values({})
    assert values["availability_zones"] == ["eu-central-1a", "eu-central-1b", "eu-central-1c"]
    assert len(values["subnets"]["*"].split(",")) == 3


def test_variant_pools_have_every_shape_of_the_trees_profiles() -> None:
    pools = variant_pools(tree_profiles([
        "cluster/cluster.yaml", "cluster/node-pools/worker-splitaz/stack.yaml",
        "cluster/node-pools/worker-karpenter/provisioners.yaml",
        "cluster/node-pools/worker-gpu/stack.yaml"]))
    assert [(p.name, p.profile) for p in pools] == [
        ("default-worker", "worker-splitaz"), ("dedicated-arm", "worker-splitaz"),
        ("burst", "worker-splitaz"), ("karpenter", "worker-karpenter"),
        ("karpenter-typed", "worker-karpenter"), ("pool-worker-gpu", "worker-gpu")]
    shapes = {p.name: p for p in pools}
    assert shapes["dedicated-arm"].discount_strategy == "spot"
    assert {"taints", "labels", "availability_zones"} <= set(shapes["dedicated-arm"].config_items)
    assert all(t.startswith("t2.") for t in shapes["burst"].instance_types)
    assert "requirements" in shapes["karpenter"].config_items
    assert [p.profile for p in variant_pools()][0] == "master-default"
