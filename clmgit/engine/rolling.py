"""Step 6 of the engine (docs/explanation/design.md): non-disruptive rolling node updates, and
draining a node pool that left the registry.

A pool is rolled group by group, in waves. Each wave: make sure `surge` up-to-date nodes exist
(scaling the group up once, on the first wave); mark every outdated node `decommission-pending`
(label `lifecycle-status`, taint `decommission-pending=rolling-upgrade:PreferNoSchedule`, so new
pods prefer other nodes); pick up to `surge` outdated nodes — those a killed run had already
cordoned first, a node with attached volumes only when an unused new node exists in its zone —
cordon them, then drain and terminate each through its Auto Scaling group. The group's capacity is
lowered with a termination only once no more outdated nodes are left than the surge, so the group
ends at the size it had. All of this state lives in the cluster (labels, annotations, the
group's desired capacity), which is what lets a killed run resume without surging twice.

Surge: config item `rolling_update_surge` (node pool first, then cluster; default 1), capped at
the group's max_size.

The drain of each node, its settings and the node marks are in `clmgit.engine.drain`.
"""


from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from clmgit.engine import kubeobjects
from clmgit.engine.clock import Cancelled, Clock, TimedOut, wait_until
from clmgit.engine.drain import (
    DrainSettings,
    Node,
    cordon,
    drain_node,
    drain_settings,
    mark,
    nodes_by_instance,
    release,
)
from clmgit.engine.kube import NODES, KubeClient
from clmgit.engine.nodepools import ASG, Instance, NodePoolBackend
from clmgit.engine.stacks import ResourceChange
from clmgit.model import Cluster

#: Hears what a rolling update is doing, one sentence at a time (progress).
Events = Callable[[str], None]
#: Asked before each wave; raises `WindowClosed` to pause the update there.
BeforeWave = Callable[[], None]


class WindowClosed(Cancelled):
    """The cluster's maintenance window closed: the update pauses between two waves (the
    nodes drained so far are done), and the next run in a window resumes it."""

_TELL_EVERY = 30.0  # seconds between progress reports of an unchanged wait

# --- the rolling update ---------------------------------------------------------------------


@dataclass(frozen=True)
class RollResult:
    replaced: tuple[str, ...] = ()  # instance ids, in the order they went
    waves: int = 0


def _group(pools: NodePoolBackend, cluster: Cluster, pool: str,
           asg: str) -> tuple[ASG | None, list[Instance]]:
    state = pools.pool_state(cluster, pool)
    group = next((g for g in state.asgs if g.name == asg), None)
    return group, [i for i in state.instances if i.asg == asg
                   and not i.lifecycle_state.startswith("Terminat")]


def _wait_for_nodes(kube: KubeClient, instances: Iterable[Instance], settings: DrainSettings,
                    clock: Clock, *, pool: str, events: Events) -> dict[str, Node]:
    """Every in-service instance has a Ready node; the nodes by instance id. The wait is
    reported to `events`; a timeout names the instances still missing."""
    wanted = sorted(i.id for i in instances if i.in_service)
    backoff = settings.node_backoff()
    missing: list[str] = wanted

    def not_ready(nodes: dict[str, Node]) -> list[str]:
        return [i for i in wanted if i not in nodes or not nodes[i].ready]

    told = -_TELL_EVERY

    def waiting(nodes: dict[str, Node], waited: float) -> None:
        # Said when the missing nodes change, else every _TELL_EVERY seconds: polls are often.
        nonlocal missing, told
        now_missing = not_ready(nodes)
        if now_missing == missing and waited < told + _TELL_EVERY:
            return
        missing, told = now_missing, waited
        events(f"pool {pool}: waiting for {len(missing)} new node(s) ({', '.join(missing)}) "
               f"to be Ready, {waited:.0f}s of {backoff.timeout:g}s")

    try:
        return wait_until(lambda: nodes_by_instance(kube), lambda nodes: not not_ready(nodes),
                          clock=clock, backoff=backoff, on_wait=waiting,
                          what="new instances to become Ready nodes")
    except TimedOut:
        raise TimedOut(f"pool {pool}: timed out after {backoff.timeout:g}s waiting for "
                       f"{', '.join(missing)} to become Ready nodes; run again later") from None


def _pick_wave(old: Sequence[Instance], new: Sequence[Instance], nodes: Mapping[str, Node],
               surge: int) -> tuple[list[Instance], int]:
    """Up to `surge` outdated instances to replace now, and how many instances with volumes wait
    for a new node in their zone. Those a killed run had cordoned come first."""
    started = [i for i in old if i.id in nodes and nodes[i.id].ours and nodes[i.id].cordoned]
    free: dict[str, int] = {}
    for instance in new:
        if instance.id in nodes and nodes[instance.id].ready:
            free[instance.az] = free.get(instance.az, 0) + 1
    wave, unmatched = list(started), 0
    for instance in (i for i in old if i not in started):
        if len(wave) >= surge:
            break
        node = nodes.get(instance.id)
        if node is not None and node.volumes:
            if not free.get(instance.az):
                unmatched += 1
                continue
            free[instance.az] -= 1
        wave.append(instance)
    return wave, unmatched


def _release_current(kube: KubeClient, instances: Sequence[Instance],
                     nodes: Mapping[str, Node]) -> None:
    """Nodes marked by an earlier run whose instances are no longer outdated go back to work."""
    for instance in instances:
        node = nodes.get(instance.id)
        if not instance.outdated and node is not None and node.ours:
            release(kube, node)


def _roll_group(kube: KubeClient, pools: NodePoolBackend, cluster: Cluster, pool: str, asg: str,
                settings: DrainSettings, clock: Clock, events: Events,
                before_wave: BeforeWave) -> tuple[list[str], int]:
    replaced: list[str] = []
    waves = 0
    while True:
        pools.wait_for_instances_in_service(asg)
        group, instances = _group(pools, cluster, pool, asg)
        old = [i for i in instances if i.outdated]
        if group is None or not old:
            return replaced, waves
        surge = min(settings.surge, group.max_size)
        new = [i for i in instances if not i.outdated]
        wanted_new = min(surge, group.desired_capacity)
        if len(new) < wanted_new:  # the surge; refused above max_size
            pools.set_desired_capacity(asg, group.desired_capacity + wanted_new - len(new))
            continue
        nodes = _wait_for_nodes(kube, new, settings, clock, pool=pool, events=events)
        for instance in old:
            if instance.id in nodes:
                mark(kube, nodes[instance.id])
        wave, unmatched = _pick_wave(old, new, nodes, surge)
        if not wave:
            # Every outdated node has volumes and no new node shares its zone: ask for more.
            pools.set_desired_capacity(asg, group.desired_capacity + min(unmatched, surge))
            continue
        before_wave()
        _replace(kube, pools, wave, nodes, old_left=len(old), surge=surge, settings=settings,
                 clock=clock, events=lambda text: events(f"pool {pool}: {text}"))
        replaced += [i.id for i in wave]
        waves += 1


def _replace(kube: KubeClient, pools: NodePoolBackend, wave: Sequence[Instance],
             nodes: Mapping[str, Node], *, old_left: int, surge: int, settings: DrainSettings,
             clock: Clock, events: Events) -> None:
    for instance in wave:
        if instance.id in nodes:
            cordon(kube, nodes[instance.id])
    for instance in wave:
        node = nodes.get(instance.id)
        if node is not None:
            events(f"draining node {node.name} ({instance.id})")
            drain_node(kube, _fresh(kube, node), settings, clock=clock)
        # Capacity goes down only once the surge is all that is left to give back.
        pools.terminate_instance(instance.id, decrement_capacity=old_left <= surge)
        events(f"terminated {instance.id}")
        old_left -= 1


def _fresh(kube: KubeClient, node: Node) -> Node:
    obj = cast(kubeobjects.Node | None, kube.get(NODES, node.name))
    return Node.from_api(obj) if obj is not None else node


def roll_node_pool(kube: KubeClient, pools: NodePoolBackend, cluster: Cluster, pool: str, *,
                   clock: Clock, dry_run: bool = False,
                   planned: Sequence[ResourceChange] = (),
                   events: Events = lambda text: None,
                   before_wave: BeforeWave = lambda: None) -> RollResult:
    """Replace every outdated instance of `pool`; safe to run again after being killed. A dry
    run (before any stack changed) plans the instances outdated once the pool's stack has taken
    its `planned` changes. `events` hears each wait, drain and termination; `before_wave` may
    pause the update before a wave (`WindowClosed`)."""
    settings = drain_settings(cluster, pool)
    state = pools.pool_state(cluster, pool)
    if dry_run:
        outdated = state.outdated_after(planned)
        waves = sum(math.ceil(sum(1 for i in outdated if i.asg == g.name)
                              / min(settings.surge, max(g.max_size, 1)))
                    for g in state.asgs)
        return RollResult(tuple(i.id for i in outdated), waves)
    _release_current(kube, state.instances, nodes_by_instance(kube))
    replaced: list[str] = []
    waves = 0
    for group in state.asgs:
        ids, n = _roll_group(kube, pools, cluster, pool, group.name, settings, clock, events,
                             before_wave)
        replaced += ids
        waves += n
    return RollResult(tuple(replaced), waves)


def drain_node_pool(kube: KubeClient, pools: NodePoolBackend, cluster: Cluster, pool: str, *,
                    clock: Clock, dry_run: bool = False) -> RollResult:
    """Drain every node of a pool that left the registry and terminate its instances, before its
    stack is deleted; one wave. Pods go to the cluster's other pools."""
    settings = drain_settings(cluster, pool)
    instances = [i for i in pools.pool_state(cluster, pool).instances
                 if not i.lifecycle_state.startswith("Terminat")]
    if dry_run or not instances:
        return RollResult(tuple(i.id for i in instances), int(bool(instances)))
    nodes = nodes_by_instance(kube)
    for instance in instances:
        if instance.id in nodes:
            mark(kube, nodes[instance.id])
            cordon(kube, nodes[instance.id])
    for instance in instances:
        if instance.id in nodes:
            drain_node(kube, _fresh(kube, nodes[instance.id]), settings, clock=clock)
        pools.terminate_instance(instance.id, decrement_capacity=True)
    return RollResult(tuple(i.id for i in instances), 1)
