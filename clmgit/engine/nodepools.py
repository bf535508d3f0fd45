"""Node pools as the rolling update sees them (DESIGN.md §6 step 6): a pool's Auto Scaling groups,
their instances, and which instances are outdated.

An instance is outdated when its launch template id or version, or its instance type, differ
from what its group launches now. The cloud side is behind the `NodePoolBackend` seam:
`clmgit.adapters.aws.AutoScalingPools` is the real one, `FakeNodePools` below the in-memory one.
A pool's groups are the Auto Scaling groups of its stack, `nodepool-<pool>-<local_id>`. Groups on
launch configurations instead of launch templates are never reported outdated.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Protocol

from clmgit.engine.stacks import node_pool_stack_name
from clmgit.errors import ApplyError
from clmgit.model import Cluster

IN_SERVICE = "InService"
HEALTHY = "Healthy"


@dataclass(frozen=True)
class ASG:
    name: str
    min_size: int
    max_size: int
    desired_capacity: int
    launch_template_id: str
    #: Resolved to a number: `$Latest` and `$Default` are looked up.
    launch_template_version: str
    #: What the group launches: its launch template's type, or its mixed-instances overrides.
    instance_types: tuple[str, ...]
    availability_zones: tuple[str, ...]


@dataclass(frozen=True)
class Instance:
    id: str
    asg: str
    az: str
    launch_template_id: str
    launch_template_version: str
    instance_type: str
    lifecycle_state: str  # Auto Scaling's: Pending, InService, Terminating, ...
    health: str  # Healthy or Unhealthy
    outdated: bool

    @property
    def in_service(self) -> bool:
        return self.lifecycle_state == IN_SERVICE and self.health == HEALTHY


@dataclass(frozen=True)
class PoolState:
    pool: str
    asgs: tuple[ASG, ...]
    instances: tuple[Instance, ...]

    @property
    def outdated(self) -> tuple[Instance, ...]:
        return tuple(i for i in self.instances if i.outdated)


def is_outdated(
    asg: ASG, *, launch_template_id: str, launch_template_version: str, instance_type: str
) -> bool:
    """Whether an instance of `asg` with these launch settings must be replaced."""
    return (
        launch_template_id != asg.launch_template_id
        or launch_template_version != asg.launch_template_version
        or (bool(asg.instance_types) and instance_type not in asg.instance_types)
    )


class NodePoolBackend(Protocol):
    def pool_state(self, cluster: Cluster, pool: str) -> PoolState:
        """The pool's groups and instances; empty if its stack does not exist."""
        ...

    def set_desired_capacity(self, asg: str, desired: int) -> None:
        """Scale a group (for surge); above the group's max_size is refused."""
        ...

    def terminate_instance(self, instance_id: str, *, decrement_capacity: bool) -> None:
        """Terminate through the group, so that it knows; an instance already gone is fine."""
        ...

    def wait_for_instances_in_service(self, asg: str) -> None:
        """Wait until the group has as many healthy InService instances as it desires."""
        ...


def check_capacity(asg: str, desired: int, max_size: int) -> None:
    if not 0 <= desired <= max_size:
        raise ApplyError(
            f"cannot scale {asg} to {desired}: it allows 0 to {max_size} instances; "
            "raise max_size of the node pool"
        )


# --- the in-memory fake ---------------------------------------------------------------------


class FakeNodePools:
    """An in-memory `NodePoolBackend`: groups launch instances at once, round-robin over their
    AZs, with the launch settings they have at that moment. `roll` changes those settings, as a
    changed node-pool template would. `calls` records every change, as (operation, target)."""

    def __init__(self) -> None:
        self.groups: dict[str, tuple[str, ASG]] = {}  # name -> (stack name, group)
        self.instances: dict[str, Instance] = {}
        self.calls: list[tuple[str, str]] = []
        self._ids = itertools.count(1)

    def add_group(self, cluster: Cluster, pool: str, asg: ASG) -> None:
        stack = node_pool_stack_name(cluster, pool)
        self.groups[asg.name] = (stack, replace(asg, desired_capacity=0))
        self._scale(asg.name, asg.desired_capacity)

    def roll(self, asg: str, *, version: str, instance_types: tuple[str, ...] = ()) -> None:
        stack, group = self.groups[asg]
        self.groups[asg] = (stack, replace(
            group, launch_template_version=version,
            instance_types=instance_types or group.instance_types,
        ))

    def pool_state(self, cluster: Cluster, pool: str) -> PoolState:
        stack = node_pool_stack_name(cluster, pool)
        asgs = tuple(group for s, group in self.groups.values() if s == stack)
        names = {a.name: a for a in asgs}
        instances = tuple(
            replace(i, outdated=is_outdated(
                names[i.asg], launch_template_id=i.launch_template_id,
                launch_template_version=i.launch_template_version, instance_type=i.instance_type,
            ))
            for i in self.instances.values()
            if i.asg in names
        )
        return PoolState(pool, asgs, instances)

    def set_desired_capacity(self, asg: str, desired: int) -> None:
        check_capacity(asg, desired, self.groups[asg][1].max_size)
        self.calls.append(("scale", f"{asg}={desired}"))
        self._scale(asg, desired)

    def terminate_instance(self, instance_id: str, *, decrement_capacity: bool) -> None:
        instance = self.instances.pop(instance_id, None)
        if instance is None:
            return
        self.calls.append(("terminate", instance_id))
        stack, group = self.groups[instance.asg]
        desired = group.desired_capacity - 1 if decrement_capacity else group.desired_capacity
        self.groups[instance.asg] = (stack, replace(group, desired_capacity=desired))
        self._scale(instance.asg, desired)

    def wait_for_instances_in_service(self, asg: str) -> None:
        """Instances of the fake are in service from the start."""

    def _scale(self, asg: str, desired: int) -> None:
        stack, group = self.groups[asg]
        self.groups[asg] = (stack, replace(group, desired_capacity=desired))
        mine = [i for i in self.instances.values() if i.asg == asg]
        for instance in mine[desired:]:
            del self.instances[instance.id]
        for n in range(len(mine), desired):
            self._launch(group, az=group.availability_zones[n % len(group.availability_zones)])

    def _launch(self, group: ASG, *, az: str) -> None:
        instance_id = f"i-{next(self._ids):017x}"
        self.instances[instance_id] = Instance(
            id=instance_id, asg=group.name, az=az,
            launch_template_id=group.launch_template_id,
            launch_template_version=group.launch_template_version,
            instance_type=group.instance_types[0] if group.instance_types else "",
            lifecycle_state=IN_SERVICE, health=HEALTHY, outdated=False,
        )
