"""Helpers of the Kubernetes engine tests that are not fixtures (a module of its own: test modules
import it by a name no other test directory uses)."""

from __future__ import annotations

from typing import Any

from clmgit.adapters.aws.cloudformation import CloudFormationStacks
from clmgit.engine.nodepools import ASG
from clmgit.engine.stacks import apply_stacks, main_stack, node_pool_stack
from clmgit.model import Cluster
from tests.helpers.cfn_templates import MAIN, node_pool


def pool_template(*, instance_type: str = "t3.micro", desired: int = 3, max_size: int = 6) -> str:
    """One Auto Scaling group over two zones on a launch template; a new instance type makes
    the instances running so far outdated."""
    return node_pool(instance_type=instance_type, desired=desired, max_size=max_size)


def apply_pool(stacks: CloudFormationStacks, cluster: Cluster, **kwargs: Any) -> None:
    apply_stacks(stacks, cluster=cluster, main=main_stack(cluster, MAIN),
                 node_pools=[node_pool_stack(cluster, "default", pool_template(**kwargs))])


#: An Auto Scaling group of two instances for the in-memory node pools.
GROUP_TEMPLATE = ASG(name="default-asg", min_size=0, max_size=4, desired_capacity=2,
                     launch_template_id="lt-1", launch_template_version="1",
                     instance_types=("m5.large",), availability_zones=("eu-central-1a",))
