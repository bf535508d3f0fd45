"""The Auto Scaling adapter against moto in server mode: pool state, outdated instances, surge and
termination — the operations the rolling update is built from."""

from __future__ import annotations

from typing import Any

import pytest

from clmgit.adapters.aws.autoscaling import AutoScalingPools
from clmgit.adapters.aws.cloudformation import CloudFormationStacks
from clmgit.engine.clock import TimedOut
from clmgit.engine.nodepools import PoolState
from clmgit.engine.stacks import apply_stacks, main_stack, node_pool_stack
from clmgit.errors import ApplyError
from clmgit.model import Cluster
from tests.helpers import cfn_templates as t


def apply_pool(stacks: CloudFormationStacks, cluster: Cluster, **kwargs: Any) -> None:
    apply_stacks(stacks, cluster=cluster, main=main_stack(cluster, t.MAIN),
                 node_pools=[node_pool_stack(cluster, "default", t.node_pool(**kwargs))])


@pytest.fixture
def state(stacks: CloudFormationStacks, pools: AutoScalingPools, cluster: Cluster) -> PoolState:
    apply_pool(stacks, cluster, desired=3)
    return pools.pool_state(cluster, "default")


def test_pool_state_lists_the_group_and_its_instances_with_their_zones(
    state: PoolState, aws: Any
) -> None:
    (asg,) = state.asgs
    assert (asg.desired_capacity, asg.max_size, asg.instance_types) == (3, 4, ("t3.micro",))
    assert asg.launch_template_version == "1"  # "$Latest" resolved
    assert asg.availability_zones == ("eu-central-1a", "eu-central-1b")
    assert len(state.instances) == 3 and not state.outdated
    ec2 = aws("ec2").describe_instances(InstanceIds=[i.id for i in state.instances])
    zones = {i["InstanceId"]: i["Placement"]["AvailabilityZone"]
             for r in ec2["Reservations"] for i in r["Instances"]}
    assert {i.id: i.az for i in state.instances} == zones
    settings = {(i.asg, i.launch_template_id, i.instance_type, i.lifecycle_state)
                for i in state.instances}
    assert settings == {(asg.name, asg.launch_template_id, "t3.micro", "InService")}


def test_a_changed_template_makes_the_old_instances_outdated_and_new_ones_current(
    state: PoolState, stacks: CloudFormationStacks, pools: AutoScalingPools, cluster: Cluster
) -> None:
    old = {i.id for i in state.instances}

    apply_pool(stacks, cluster, desired=3, instance_type="t3.small")
    after = pools.pool_state(cluster, "default")

    assert {i.id for i in after.outdated} == old
    assert after.asgs[0].launch_template_version == "2"
    assert after.asgs[0].instance_types == ("t3.small",)

    # What the rolling update does with it: surge, then terminate the old ones.
    pools.set_desired_capacity(after.asgs[0].name, 4)
    pools.wait_for_instances_in_service(after.asgs[0].name)
    surged = pools.pool_state(cluster, "default")
    (new,) = [i for i in surged.instances if i.id not in old]
    assert (new.outdated, new.instance_type, new.launch_template_version) \
        == (False, "t3.small", "2")
    for instance_id in old:
        pools.terminate_instance(instance_id, decrement_capacity=True)
    final = pools.pool_state(cluster, "default")
    assert final.asgs[0].desired_capacity == 1
    assert [i.id for i in final.instances] == [new.id]


def test_a_new_launch_template_version_alone_makes_instances_outdated(
    state: PoolState, stacks: CloudFormationStacks, pools: AutoScalingPools, cluster: Cluster
) -> None:
    apply_pool(stacks, cluster, desired=3, image="ami-03cf127a")  # same instance type

    after = pools.pool_state(cluster, "default")
    assert {i.launch_template_version for i in after.instances} == {"1"}
    assert {i.id for i in after.outdated} == {i.id for i in state.instances}


LATEST = "!GetAtt LaunchTemplate.LatestVersionNumber"


def test_a_group_on_a_get_att_version_moves_to_the_templates_new_version(
    stacks: CloudFormationStacks, pools: AutoScalingPools, cluster: Cluster
) -> None:
    version = LATEST  # as kubernetes-on-aws writes it
    apply_pool(stacks, cluster, desired=2, version=version)
    before = pools.pool_state(cluster, "default")

    apply_pool(stacks, cluster, desired=2, version=version, instance_type="t3.small")
    after = pools.pool_state(cluster, "default")

    assert [g.launch_template_version for g in (*before.asgs, *after.asgs)] == ["1", "2"]
    assert after.asgs[0].instance_types == ("t3.small",)
    assert {i.id for i in after.outdated} == {i.id for i in before.instances}
    # A node launched now comes from the new version.
    pools.set_desired_capacity(after.asgs[0].name, 3)
    pools.wait_for_instances_in_service(after.asgs[0].name)
    [new] = [i for i in pools.pool_state(cluster, "default").instances if not i.outdated]
    assert (new.launch_template_version, new.instance_type) == ("2", "t3.small")


def test_a_dry_run_plans_the_instances_the_update_will_outdate(
    stacks: CloudFormationStacks, pools: AutoScalingPools, cluster: Cluster
) -> None:
    apply_pool(stacks, cluster, desired=2, version=LATEST)
    before = pools.pool_state(cluster, "default")

    def planned(**kwargs: Any) -> set[str]:
        [*_, pool] = apply_stacks(stacks, cluster=cluster, main=main_stack(cluster, t.MAIN),
                                  node_pools=[node_pool_stack(cluster, "default", t.node_pool(
                                      desired=2, version=LATEST, **kwargs))], dry_run=True)
        return {i.id for i in pools.pool_state(cluster, "default").outdated_after(pool.changes)}

    assert planned() == set()
    assert planned(security_group="sg-new") == set()  # the group's tags only
    assert planned(image="ami-03cf127a") == {i.id for i in before.instances}
    assert not pools.pool_state(cluster, "default").outdated  # a dry run changed nothing

    apply_pool(stacks, cluster, desired=2, version=LATEST, image="ami-03cf127a")
    assert {i.id for i in pools.pool_state(cluster, "default").outdated} == {
        i.id for i in before.instances}


def test_an_unchanged_template_leaves_a_get_att_group_where_it_is(
    stacks: CloudFormationStacks, pools: AutoScalingPools, cluster: Cluster
) -> None:
    apply_pool(stacks, cluster, desired=2, version=LATEST)
    apply_pool(stacks, cluster, desired=2, version=LATEST)

    after = pools.pool_state(cluster, "default")
    assert after.asgs[0].launch_template_version == "1" and not after.outdated


def test_terminating_without_decrement_replaces_the_instance_and_twice_is_fine(
    state: PoolState, pools: AutoScalingPools, cluster: Cluster
) -> None:
    victim = state.instances[0].id

    pools.terminate_instance(victim, decrement_capacity=False)
    pools.terminate_instance(victim, decrement_capacity=False)

    after = pools.pool_state(cluster, "default")
    assert victim not in {i.id for i in after.instances}
    assert len(after.instances) == 3


def test_scaling_above_the_groups_maximum_is_refused(
    state: PoolState, pools: AutoScalingPools
) -> None:
    with pytest.raises(ApplyError, match="allows 0 to 4"):
        pools.set_desired_capacity(state.asgs[0].name, 5)


def test_waiting_for_instances_that_never_come_times_out(
    state: PoolState, pools: AutoScalingPools
) -> None:
    from moto.autoscaling.models import autoscaling_backends

    backend = autoscaling_backends["123456789012"]["eu-central-1"]
    group = backend.autoscaling_groups[state.asgs[0].name]
    group.desired_capacity = 4  # desired, but no instance launched

    with pytest.raises(TimedOut, match="instances of"):
        pools.wait_for_instances_in_service(state.asgs[0].name)


def test_a_pool_without_a_stack_is_empty(pools: AutoScalingPools, cluster: Cluster) -> None:
    assert pools.pool_state(cluster, "nothing") == PoolState("nothing", (), ())
