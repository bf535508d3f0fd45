"""Node pools as the rolling update sees them (docs/explanation/reconcile.md): a pool's Auto Scaling
groups, their instances, and which instances are outdated.

An instance is outdated when its launch template id or version, or its instance type, differ
from what its group launches now; a dry run also counts those whose launch template the stack
update will change (`PoolState.outdated_after`). The cloud side is behind the
`NodePoolBackend` seam: `clmgit.adapters.aws.autoscaling.AutoScalingPools` is the real one,
`FakeNodePools` (clmgit_sandbox.doubles) the in-memory one.
A pool's groups are the Auto Scaling groups of its stack, `nodepool-<pool>-<local_id>`. Groups on
launch configurations instead of launch templates are never reported outdated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from clmgit.engine.stacks import ResourceChange
from clmgit.errors import ApplyError
from clmgit.model import Cluster

LAUNCH_TEMPLATE_TYPE = "AWS::EC2::LaunchTemplate"
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
    #: The launch templates of the pool's stack: their ids by logical id in the template.
    launch_templates: Mapping[str, str] = field(default_factory=dict)

    @property
    def outdated(self) -> tuple[Instance, ...]:
        return tuple(i for i in self.instances if i.outdated)

    def outdated_after(self, changes: Iterable[ResourceChange]) -> tuple[Instance, ...]:
        """The instances outdated once the pool's stack has taken `changes` (its change set):
        those outdated now, and those launched from a launch template the update gives a new
        version (modified) or takes away (removed; the groups move to another) — their groups
        launch the new version then, as `!GetAtt ….LatestVersionNumber` makes them. A change of
        a group alone (its size, its tags) outdates no instance. This is what the rolling update
        after the update will replace, so a dry run can show it before."""
        changed = {self.launch_templates[c.logical_id] for c in changes
                   if c.resource_type == LAUNCH_TEMPLATE_TYPE and c.action in ("Modify", "Remove")
                   and c.logical_id in self.launch_templates}
        return tuple(i for i in self.instances
                     if i.outdated or i.launch_template_id in changed)


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
