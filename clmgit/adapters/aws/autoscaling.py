"""Auto Scaling node pools, the engine's `NodePoolBackend`: a pool's groups are those of its
node-pool stack, its instances those of the groups, each marked outdated against its group's
launch template."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import boto3
from botocore.exceptions import ClientError

from clmgit.adapters.aws.ec2 import LaunchTemplates
from clmgit.adapters.aws.session import aws_errors, make_client, stack_missing
from clmgit.engine.clock import Backoff, Clock, SystemClock, wait_until
from clmgit.engine.nodepools import (
    ASG,
    HEALTHY,
    IN_SERVICE,
    LAUNCH_TEMPLATE_TYPE,
    Instance,
    PoolState,
    check_capacity,
    is_outdated,
)
from clmgit.errors import ApplyError
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster
from clmgit.stacknames import node_pool_stack_name

ASG_TYPE = "AWS::AutoScaling::AutoScalingGroup"
INSTANCE_BACKOFF = Backoff(initial=10, factor=1.5, maximum=30, timeout=1800)


class AutoScalingPools:
    """The `NodePoolBackend` on Auto Scaling: a pool's groups are those of its stack."""

    def __init__(
        self, session: boto3.Session, *, clock: Clock | None = None,
        backoff: Backoff = INSTANCE_BACKOFF, layout: Layout = DEFAULT,
    ) -> None:
        self._layout = layout  # which name a pool's stack has
        self._cf = make_client(session, "cloudformation")
        self._asg = make_client(session, "autoscaling")
        self._ec2 = make_client(session, "ec2")
        self._clock = clock or SystemClock()
        self._backoff = backoff

    def pool_state(self, cluster: Cluster, pool: str) -> PoolState:
        stack = node_pool_stack_name(cluster, pool, self._layout)
        with aws_errors(f"reading node pool {pool} (stack {stack})"):
            resources = self._resources(stack)
            raw_groups = self._groups([r["PhysicalResourceId"] for r in resources
                                       if r["ResourceType"] == ASG_TYPE])
            templates = LaunchTemplates(self._ec2)
            asgs = [self._asg_of(raw, templates) for raw in raw_groups]
            instances = [
                self._instance_of(raw_instance, asg, templates)
                for raw, asg in zip(raw_groups, asgs, strict=True)
                for raw_instance in raw.get("Instances", ())
            ]
        return PoolState(pool, tuple(asgs), tuple(instances), {
            r["LogicalResourceId"]: r["PhysicalResourceId"] for r in resources
            if r["ResourceType"] == LAUNCH_TEMPLATE_TYPE})

    def set_desired_capacity(self, asg: str, desired: int) -> None:
        with aws_errors(f"scaling {asg} to {desired}"):
            group = self._groups([asg])
            if not group:
                raise ApplyError(f"Auto Scaling group {asg} does not exist")
            check_capacity(asg, desired, int(group[0]["MaxSize"]))
            self._asg.set_desired_capacity(
                AutoScalingGroupName=asg, DesiredCapacity=desired, HonorCooldown=False)

    def terminate_instance(self, instance_id: str, *, decrement_capacity: bool) -> None:
        with aws_errors(f"terminating {instance_id}"):
            # Asking first keeps a repeated call (a resumed run) from being an error.
            known = self._asg.describe_auto_scaling_instances(InstanceIds=[instance_id])
            if not known["AutoScalingInstances"]:
                return
            self._asg.terminate_instance_in_auto_scaling_group(
                InstanceId=instance_id, ShouldDecrementDesiredCapacity=decrement_capacity)

    def wait_for_instances_in_service(self, asg: str) -> None:
        def fetch() -> dict[str, Any]:
            with aws_errors(f"reading {asg}"):
                groups = self._groups([asg])
            if not groups:
                raise ApplyError(f"Auto Scaling group {asg} does not exist")
            return groups[0]

        def ready(group: Mapping[str, Any]) -> bool:
            states = [(i["LifecycleState"], i["HealthStatus"]) for i in group.get("Instances", ())]
            serving = sum(1 for s in states if s == (IN_SERVICE, HEALTHY))
            pending = any(state.startswith("Pending") for state, _ in states)
            return serving >= int(group["DesiredCapacity"]) and not pending

        wait_until(fetch, ready, clock=self._clock, backoff=self._backoff,
                   what=f"the instances of {asg} to come into service")

    # --- reading ---

    def _resources(self, stack: str) -> list[dict[str, Any]]:
        """The stack's resources that exist (have a physical id); none without the stack."""
        try:
            pages = self._cf.get_paginator("list_stack_resources").paginate(StackName=stack)
            resources = [r for page in pages for r in page["StackResourceSummaries"]]
        except ClientError as e:
            if stack_missing(e):
                return []
            raise
        return [r for r in resources if r.get("PhysicalResourceId")]

    def _groups(self, names: list[str]) -> list[dict[str, Any]]:
        if not names:
            return []
        pages = self._asg.get_paginator("describe_auto_scaling_groups").paginate(
            AutoScalingGroupNames=names)
        return [g for page in pages for g in page["AutoScalingGroups"]]

    @staticmethod
    def _asg_of(raw: Mapping[str, Any], templates: LaunchTemplates) -> ASG:
        mixed = raw.get("MixedInstancesPolicy", {}).get("LaunchTemplate", {})
        spec = raw.get("LaunchTemplate") or mixed.get("LaunchTemplateSpecification") or {}
        template_id = spec.get("LaunchTemplateId", "")
        version = templates.version(template_id, spec.get("Version", "$Default"))
        overrides = tuple(o["InstanceType"] for o in mixed.get("Overrides", ())
                          if "InstanceType" in o)
        if not overrides and template_id:
            overrides = (templates.instance_type(template_id, version),)
        return ASG(
            name=raw["AutoScalingGroupName"], min_size=int(raw["MinSize"]),
            max_size=int(raw["MaxSize"]), desired_capacity=int(raw["DesiredCapacity"]),
            launch_template_id=template_id, launch_template_version=version,
            instance_types=tuple(t for t in overrides if t),
            availability_zones=tuple(raw.get("AvailabilityZones", ())),
        )

    @staticmethod
    def _instance_of(raw: Mapping[str, Any], asg: ASG, templates: LaunchTemplates) -> Instance:
        spec = raw.get("LaunchTemplate") or {}
        template_id = spec.get("LaunchTemplateId", "")
        version = templates.version(template_id, spec.get("Version", ""))
        instance_type = raw.get("InstanceType", "")
        return Instance(
            id=raw["InstanceId"], asg=asg.name, az=raw.get("AvailabilityZone", ""),
            launch_template_id=template_id, launch_template_version=version,
            instance_type=instance_type, lifecycle_state=raw.get("LifecycleState", ""),
            health=raw.get("HealthStatus", ""),
            outdated=is_outdated(asg, launch_template_id=template_id,
                                 launch_template_version=version, instance_type=instance_type),
        )
