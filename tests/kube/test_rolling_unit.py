"""Wave planning of the rolling update on the in-memory fakes: surge, capacity given back, zones
for nodes with volumes, and nodes released when they no longer need replacing."""

from __future__ import annotations

import pytest
from clmgit_sandbox.doubles import FakeClock, FakeKube, FakeNodePools

from clmgit.engine.clock import TimedOut
from clmgit.engine.drain import LIFECYCLE_LABEL, TAINT
from clmgit.engine.kube import NODES
from clmgit.engine.rolling import roll_node_pool
from clmgit.model import Cluster, NodePool
from tests.helpers.nodes import GROUP, sync


@pytest.fixture
def world() -> tuple[FakeKube, FakeNodePools, Cluster, FakeClock]:
    cluster = Cluster(id="c", local_id="c", node_pools=(
        NodePool("p", "w", max_size=8, config_items={"rolling_update_surge": "2"}),))
    kube, pools = FakeKube(), FakeNodePools()
    pools.add_group(cluster, "p", GROUP)
    sync(kube, pools)
    pools.roll("asg", version="2")
    clock = FakeClock(on_sleep=lambda _: sync(kube, pools))
    return kube, pools, cluster, clock


def test_four_nodes_with_surge_two_go_in_two_waves_and_the_group_ends_at_four(world) -> None:
    kube, pools, cluster, clock = world
    old = set(pools.instances)

    result = roll_node_pool(kube, pools, cluster, "p", clock=clock)

    assert set(result.replaced) == old and result.waves == 2
    assert [c for c in pools.calls if c[0] == "scale"] == [("scale", "asg=6")]
    assert pools.groups["asg"][1].desired_capacity == 4
    assert not pools.pool_state(cluster, "p").outdated


def test_nodes_with_volumes_wait_for_a_new_node_in_their_zone(world) -> None:
    kube, pools, cluster, clock = world
    for (kind, _, _), obj in kube.objects.items():
        if kind == "Node" and "/a/" in obj["spec"]["providerID"]:
            obj["status"]["volumesAttached"] = [{"name": "v"}]
    first_wave: list[str] = []
    original = pools.terminate_instance

    def terminate(instance_id: str, *, decrement_capacity: bool) -> None:
        if len(first_wave) < 2:
            first_wave.append(pools.instances[instance_id].az)
        original(instance_id, decrement_capacity=decrement_capacity)

    pools.terminate_instance = terminate
    result = roll_node_pool(kube, pools, cluster, "p", clock=clock)

    # The surge launched one new node in each zone: one zone-a node with volumes may go.
    assert sorted(first_wave) == ["a", "b"]
    assert len(result.replaced) == 4


def test_a_marked_node_that_is_current_again_is_released(world) -> None:
    kube, pools, cluster, clock = world
    victim = next(iter(pools.instances))
    kube.patch(NODES, f"n-{victim}", {"metadata": {"labels": {LIFECYCLE_LABEL: "draining"}},
                                      "spec": {"unschedulable": True, "taints": [TAINT]}})
    pools.roll("asg", version="1")  # the change was reverted before the run was resumed

    result = roll_node_pool(kube, pools, cluster, "p", clock=clock)

    node = kube.get(NODES, f"n-{victim}")
    assert result.waves == 0 and node is not None
    assert node["metadata"]["labels"][LIFECYCLE_LABEL] == "ready"
    assert "unschedulable" not in node["spec"] and "taints" not in node["spec"]


def test_the_roll_reports_its_waits_drains_and_terminations(world) -> None:
    kube, pools, cluster, clock = world
    old = sorted(pools.instances)
    events: list[str] = []

    roll_node_pool(kube, pools, cluster, "p", clock=clock, events=events.append)

    new = sorted(set(pools.instances) - set(old))
    assert events[0] == (f"pool p: waiting for 2 new node(s) ({', '.join(new[:2])}) to be "
                         "Ready, 0s of 900s")
    first = old.index(events[1].split("(")[1].rstrip(")"))  # a wave's order is its own
    assert events[1:3] == [f"pool p: draining node n-{old[first]} ({old[first]})",
                           f"pool p: terminated {old[first]}"]
    assert sum(e.startswith("pool p: terminated ") for e in events) == 4


def test_a_timeout_names_the_instances_whose_nodes_never_became_ready(world) -> None:
    kube, pools, cluster, _ = world
    old = set(pools.instances)
    never_synced = FakeClock()

    with pytest.raises(TimedOut) as raised:
        roll_node_pool(kube, pools, cluster, "p", clock=never_synced)

    new = ", ".join(sorted(set(pools.instances) - old))
    assert str(raised.value) == (f"pool p: timed out after 900s waiting for {new} to become "
                                 "Ready nodes; run again later")
