"""The rolling update (the engine's step 6) end to end: node pools on moto through the real Auto
Scaling adapter, nodes in the emulator kept in step by the node simulator, the drain through the
real Kubernetes adapter, all on a fake clock."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from clmgit_sandbox.aws import moto_changes
from clmgit_sandbox.doubles import FakeClock
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_pdb, make_replicaset
from clmgit_sandbox.kubelet import Kubelet, node_name

from clmgit.adapters.aws.autoscaling import AutoScalingPools
from clmgit.adapters.aws.cloudformation import CloudFormationStacks
from clmgit.adapters.kube import KubeAPI
from clmgit.engine.drain import DRAIN_START, DRAINING, LIFECYCLE_LABEL
from clmgit.engine.rolling import drain_node_pool, roll_node_pool
from clmgit.model import Cluster, NodePool
from tests.helpers.kube_pools import apply_pool

pytestmark = pytest.mark.slow  # end to end: moto, the emulator and real git


class Killed(Exception):
    """The process dying at this point."""


def node_states(server: KubeAPIServer) -> dict[str, tuple[bool, str]]:
    return {n["metadata"]["name"]: (bool(n["spec"].get("unschedulable")),
                                    n["metadata"]["labels"].get(LIFECYCLE_LABEL, ""))
            for n in server.objects("v1", "Node")}


@pytest.fixture
def outdated(stacks: CloudFormationStacks, pools: AutoScalingPools, cluster: Cluster,
             kubelet: Kubelet, server: KubeAPIServer) -> set[str]:
    """Three running nodes with a workload, then a new instance type for the pool."""
    apply_pool(stacks, cluster, desired=3)
    server.seed(make_replicaset("web", labels={"app": "web"}, replicas=3),
                make_pdb("web", match_labels={"app": "web"}, max_unavailable=1))
    kubelet.sync()
    old = {i.id for i in pools.pool_state(cluster, "default").instances}
    apply_pool(stacks, cluster, desired=3, instance_type="t3.small")
    return old


def test_every_outdated_node_is_replaced_one_surge_at_a_time(
    outdated: set[str], kube: KubeAPI, pools: AutoScalingPools, cluster: Cluster,
    server: KubeAPIServer, kubelet: Kubelet, clock: FakeClock
) -> None:
    assert roll_node_pool(kube, pools, cluster, "default", clock=clock, dry_run=True).waves == 3
    assert len(pools.pool_state(cluster, "default").instances) == 3  # the dry run changed nothing

    result = roll_node_pool(kube, pools, cluster, "default", clock=clock)

    state = pools.pool_state(cluster, "default")
    assert set(result.replaced) == outdated and result.waves == 3
    assert not state.outdated and len(state.instances) == 3
    assert state.asgs[0].desired_capacity == 3
    kubelet.sync()
    assert node_states(server) == {node_name(i.id): (False, "ready") for i in state.instances}
    assert len([p for p in server.objects("v1", "Pod")]) == 3
    assert roll_node_pool(kube, pools, cluster, "default", clock=clock).waves == 0


def test_a_run_killed_mid_drain_resumes_the_same_drain_without_surging_again(
    outdated: set[str], kube: KubeAPI, pools: AutoScalingPools, cluster: Cluster,
    server: KubeAPIServer, kubelet: Kubelet, clock: FakeClock
) -> None:
    # One pod no budget lets go: the drain waits out the grace period (2h) before forcing it.
    # Polled every 2 minutes (CLM's 30 s would only add polls: each one syncs the kubelet and
    # reads moto), still well inside the 5 minutes the forced eviction is checked against.
    cluster = replace(cluster, config_items={"drain_min_pod_lifetime": "1m",
                                             "drain_poll_interval": "2m"})
    server.seed(make_replicaset("solo", labels={"app": "solo"}, replicas=1),
                make_pdb("solo", match_labels={"app": "solo"}, min_available=1))
    kubelet.sync()
    (solo,) = [p for p in server.objects("v1", "Pod") if p["metadata"]["name"].startswith("solo")]
    start = clock.now()

    def die_after_an_hour(c: FakeClock) -> None:
        kubelet.sync()
        if c.now() > start + timedelta(hours=1):
            raise Killed

    clock.on_sleep = die_after_an_hour
    with pytest.raises(Killed):
        roll_node_pool(kube, pools, cluster, "default", clock=clock)

    draining = [n for n in server.objects("v1", "Node")
                if n["metadata"]["labels"].get(LIFECYCLE_LABEL) == DRAINING]
    (node,) = draining
    began = node["metadata"]["annotations"][DRAIN_START]
    assert node["metadata"]["name"] == solo["spec"]["nodeName"] and node["spec"]["unschedulable"]
    desired = pools.pool_state(cluster, "default").asgs[0].desired_capacity
    assert desired == 4

    seen: list[tuple[object, str | None, int]] = []

    def observe(c: FakeClock) -> None:
        kubelet.sync()
        live = server.read("v1", "Node", node["metadata"]["name"])
        seen.append((c.now(), live["metadata"]["annotations"].get(DRAIN_START) if live else None,
                     pools.pool_state(cluster, "default").asgs[0].desired_capacity))

    clock.advance(600)
    clock.on_sleep = observe
    result = roll_node_pool(kube, pools, cluster, "default", clock=clock)

    assert {a for _, a, _ in seen if a} == {began}  # the same clock, not a new one
    assert max(d for _, _, d in seen) == 4  # surged once, not twice
    # Forced when the first run's grace period ended; a new clock would have waited until 3h10m.
    assert start + timedelta(hours=2) <= clock.now() < start + timedelta(hours=2, minutes=5)
    state = pools.pool_state(cluster, "default")
    assert not state.outdated and state.asgs[0].desired_capacity == 3
    # The killed run replaced the nodes before the blocked one; the resumed run finished it.
    assert node["spec"]["providerID"].rpartition("/")[2] in result.replaced
    kubelet.sync()
    assert all(states == (False, "ready") for states in node_states(server).values())


def test_a_removed_pool_is_drained_and_its_instances_terminated(
    stacks: CloudFormationStacks, kube: KubeAPI, pools: AutoScalingPools, cluster: Cluster,
    server: KubeAPIServer, clock: FakeClock
) -> None:
    apply_pool(stacks, cluster, desired=2)
    sim = Kubelet(server, pools, cluster, pool_names=["default"], cloud_changes=moto_changes())
    sim.sync()
    server.seed(make_replicaset("web", labels={"app": "web"}, replicas=2))
    sim.sync()
    gone = Cluster(id=cluster.id, local_id=cluster.local_id, region=cluster.region,
                   node_pools=(NodePool(name="other", profile="worker"),))

    planned = drain_node_pool(kube, pools, gone, "default", clock=clock, dry_run=True)
    assert len(planned.replaced) == 2 and len(server.objects("v1", "Pod")) == 2
    result = drain_node_pool(kube, pools, gone, "default", clock=clock)

    assert set(result.replaced) == set(planned.replaced)
    assert pools.pool_state(gone, "default").instances == ()
    assert server.objects("v1", "Pod") == []  # evicted; nowhere to go in this test
