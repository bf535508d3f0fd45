"""The cluster hash and desired version (docs/explanation/design.md), against vectors built by hand
the way CLM's `Cluster.Version` builds its byte string: strings as UTF-8, criticality as a
little-endian int32, node-pool sizes as little-endian int64, config items sorted by key; SHA-1;
base64 URL encoding without padding."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import replace
from typing import Any

from clmgit.model import ClusterStatus, NodePool, cluster_hash, desired_version
from tests.helpers.configrepo import cluster

RECORD = cluster(
    id="aws:123456789012:eu-central-1:kube-1",
    infrastructure_account="aws:123456789012",
    local_id="kube-1",
    api_server_url="https://kube-1.example.org",
    channel="beta",
    environment="production",
    criticality_level=1,
    lifecycle_status="ready",
    provider="zalando-aws",
    region="eu-central-1",
    config_items={"b": "2", "a": "1"},
    node_pools=(NodePool(name="default", profile="worker-default",
                         instance_types=("m5.large", "m5.xlarge"), discount_strategy="none",
                         min_size=1, max_size=3, config_items={"z": "9", "y": "8"}),),
)

STATE = (
    b"aws:123456789012:eu-central-1:kube-1" b"aws:123456789012" b"kube-1"
    b"https://kube-1.example.org" b"beta" b"production"
    b"\x01\x00\x00\x00"  # criticality_level, int32 little-endian
    b"ready" b"zalando-aws" b"eu-central-1"
    b"a1" b"b2"  # config items by key
    b"default" b"worker-default" b"m5.large" b"m5.xlarge" b"none"
    b"\x01\x00\x00\x00\x00\x00\x00\x00" b"\x03\x00\x00\x00\x00\x00\x00\x00"  # sizes, int64 LE
    b"y8" b"z9"
)


def by_hand(state: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha1(state).digest()).decode().rstrip("=")


def test_the_hash_of_a_record_matches_the_hand_built_vector() -> None:
    assert by_hand(STATE) == "ZETX2l8yqbo88gIR_y4jBmj9rE4"  # the vector, frozen
    assert cluster_hash(RECORD) == "ZETX2l8yqbo88gIR_y4jBmj9rE4"


def test_a_negative_criticality_is_written_as_int32() -> None:
    state = STATE.replace(b"production\x01\x00\x00\x00", b"production\xff\xff\xff\xff")
    assert cluster_hash(replace(RECORD, criticality_level=-1)) == by_hand(state)


def test_a_record_without_pools_or_items() -> None:
    record = replace(RECORD, config_items={}, node_pools=())
    state = STATE[:STATE.index(b"a1b2")]
    assert cluster_hash(record) == by_hand(state)


def test_alias_owner_and_status_do_not_count_but_pool_order_does() -> None:
    same = replace(RECORD, alias="other", owner="team-x",
                   status=ClusterStatus(current_version="x#y", problems=()))
    assert cluster_hash(same) == cluster_hash(RECORD)
    reordered = replace(RECORD, config_items={"a": "1", "b": "2"})
    assert cluster_hash(reordered) == cluster_hash(RECORD)
    second = NodePool(name="second", profile="p")
    assert (cluster_hash(replace(RECORD, node_pools=(*RECORD.node_pools, second)))
            != cluster_hash(replace(RECORD, node_pools=(second, *RECORD.node_pools))))


def test_every_listed_field_counts() -> None:
    changes: list[dict[str, Any]]
    changes = [{"id": "x"}, {"infrastructure_account": "x"}, {"local_id": "x"},
               {"api_server_url": "x"}, {"channel": "x"}, {"environment": "x"},
               {"criticality_level": 2}, {"lifecycle_status": "x"}, {"provider": "x"},
               {"region": "x"}, {"config_items": {"a": "1"}}]
    for change in changes:
        assert cluster_hash(replace(RECORD, **change)) != cluster_hash(RECORD), change
    pool = RECORD.node_pools[0]
    pool_changes: list[dict[str, Any]]
    pool_changes = [{"name": "x"}, {"profile": "x"}, {"instance_types": ()},
                    {"discount_strategy": "spot"}, {"min_size": 2}, {"max_size": 4},
                    {"config_items": {}}]
    for pool_change in pool_changes:
        changed = replace(RECORD, node_pools=(replace(pool, **pool_change),))
        assert cluster_hash(changed) != cluster_hash(RECORD), pool_change


def test_the_desired_version_is_sha_hash() -> None:
    sha = "9f1b3697c6f1d2a1e0c4b7d8e9f0a1b2c3d4e5f6"
    assert desired_version(sha, RECORD) == f"{sha}#ZETX2l8yqbo88gIR_y4jBmj9rE4"
