"""Outdated-instance detection, and how `FakeNodePools` rolls a pool (its `roll` stands in for a
new launch template version). What the double shares with Auto Scaling on moto is held to one
contract: tests/engine/test_doubles_contract.py."""

from __future__ import annotations

import pytest
from clmgit_sandbox.doubles import FakeNodePools

from clmgit.engine.nodepools import ASG, is_outdated
from clmgit.model import Cluster

CLUSTER = Cluster(id="c1", local_id="kube-1")
GROUP = ASG(name="asg-1", min_size=0, max_size=4, desired_capacity=2, launch_template_id="lt-1",
            launch_template_version="3", instance_types=("m5.large",),
            availability_zones=("eu-central-1a", "eu-central-1b"))


@pytest.mark.parametrize(("template", "version", "instance_type", "outdated"), [
    ("lt-1", "3", "m5.large", False),
    ("lt-2", "3", "m5.large", True),   # another launch template
    ("lt-1", "2", "m5.large", True),   # an older version
    ("lt-1", "3", "m5.xlarge", True),  # a type the group no longer launches
])
def test_an_instance_is_outdated_when_its_launch_settings_differ_from_its_group(
    template: str, version: str, instance_type: str, outdated: bool
) -> None:
    assert is_outdated(GROUP, launch_template_id=template, launch_template_version=version,
                       instance_type=instance_type) is outdated


def test_a_group_of_several_types_accepts_each_of_them() -> None:
    mixed = ASG(**{**GROUP.__dict__, "instance_types": ("m5.large", "m5a.large")})

    assert not is_outdated(mixed, launch_template_id="lt-1", launch_template_version="3",
                           instance_type="m5a.large")


def test_the_fake_rolls_a_pool_like_auto_scaling_does() -> None:
    pools = FakeNodePools()
    pools.add_group(CLUSTER, "workers", GROUP)
    old = {i.id for i in pools.pool_state(CLUSTER, "workers").instances}

    pools.roll("asg-1", version="4")
    pools.set_desired_capacity("asg-1", 3)
    state = pools.pool_state(CLUSTER, "workers")

    assert {i.id for i in state.outdated} == old
    assert {i.az for i in state.instances} == {"eu-central-1a", "eu-central-1b"}
    for instance_id in old:
        pools.terminate_instance(instance_id, decrement_capacity=True)
    final = pools.pool_state(CLUSTER, "workers")
    assert (len(final.instances), final.outdated, final.asgs[0].desired_capacity) == (1, (), 1)
