"""One look at a cluster's health (clmgit/engine/health.py) against the emulator and its node
simulator misbehaving on purpose: a crash-looping image, a slow one, a node NotReady, a stack
rolled back, an API server that does not answer. Time is the test's fake clock."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from clmgit_sandbox.doubles import FakeClock, FakeNodePools, FakeStack, FakeStacks
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubelet import Kubelet

from clmgit.adapters.kube import KubeAPI
from clmgit.engine.clock import Backoff
from clmgit.engine.health import HealthBackends, observe
from clmgit.engine.stacks import TAG_CLUSTER
from clmgit.healthstate import HEALTHY, PENDING, UNHEALTHY, UNKNOWN, ClusterGate
from clmgit.model import Cluster, NodePool
from tests.helpers.kube_pools import GROUP_TEMPLATE

GATE = ClusterGate()


@pytest.fixture
def cluster() -> Cluster:
    local_id = f"health-{uuid.uuid4().hex[:6]}"
    return Cluster(id=f"aws:123:eu-central-1:{local_id}", local_id=local_id,
                   node_pools=(NodePool(name="default", profile="worker"),))


@pytest.fixture
def world(server: KubeAPIServer, kube: KubeAPI, cluster: Cluster, clock: FakeClock):
    pools = FakeNodePools()
    pools.add_group(cluster, "default", GROUP_TEMPLATE)
    stacks = FakeStacks()
    stacks.stacks[cluster.local_id] = FakeStack("", {TAG_CLUSTER: cluster.id})
    sim = Kubelet(server, pools, cluster, clock=lambda: clock.now().timestamp(), slow_seconds=60)
    sim.sync()
    return HealthBackends(stacks, pools, kube), sim


def deployment(image: str, namespace: str = "platform", name: str = "echo") -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": name, "image": image}]}}}}


def apply(kube: KubeAPI, sim: Kubelet, *objs: dict[str, Any]) -> None:
    """As clmgit's manifests step applies them (field manager clmgit), then a kubelet pass."""
    for obj in objs:
        ns = obj["metadata"].get("namespace")
        kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        kube.apply(obj)
    sim.sync()
    sim.sync()


def test_a_rolled_out_deployment_on_ready_nodes_is_healthy(world, kube, cluster) -> None:
    backends, sim = world
    apply(kube, sim, deployment("echo:1"))
    assert observe(cluster, backends, GATE).state == HEALTHY


def test_a_crash_looping_image_is_unhealthy_naming_the_object_and_reason(world, kube,
                                                                        cluster) -> None:
    backends, sim = world
    apply(kube, sim, deployment("echo:broken"))
    seen = observe(cluster, backends, GATE)
    assert seen.state == UNHEALTHY
    crash = [r for r in seen.reasons if "CrashLoopBackOff" in r]
    assert crash and crash[0].startswith("Deployment platform/echo: pod platform/echo-")
    assert "Deployment platform/echo: 0 of 2 updated replicas are available" in seen.reasons


def test_a_slow_image_is_pending_until_ready_then_healthy(world, kube, cluster, clock) -> None:
    backends, sim = world
    apply(kube, sim, deployment("echo:slow"))
    seen = observe(cluster, backends, GATE)
    assert seen.state == PENDING
    assert seen.reasons == ("Deployment platform/echo: 0 of 2 updated replicas are available",)
    clock.advance(61)
    sim.sync()
    sim.sync()
    assert observe(cluster, backends, GATE).state == HEALTHY


def test_workloads_outside_the_touched_namespaces_are_not_judged(world, kube, cluster,
                                                                 server) -> None:
    backends, sim = world
    apply(kube, sim, deployment("echo:1"))
    server.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
                deployment("app:broken", namespace="team", name="app"))
    sim.sync()
    sim.sync()
    assert observe(cluster, backends, GATE).state == HEALTHY
    listed = observe(cluster, backends, ClusterGate(namespaces=("team",)))
    assert listed.state == UNHEALTHY and "Deployment team/app" in listed.reasons[0]


def test_a_node_not_ready_and_a_cordoned_node_are_unhealthy(world, kube, cluster,
                                                            server) -> None:
    backends, sim = world
    apply(kube, sim, deployment("echo:1"))
    first, second = sorted(backends.pools.instances)
    sim.not_ready.add(first)
    sim.sync()
    node = server.read("v1", "Node", f"node-{second}")
    node["spec"]["unschedulable"] = True
    server.seed(node)
    seen = observe(cluster, backends, GATE)
    assert seen.state == UNHEALTHY
    assert f"node node-{first} is NotReady" in seen.reasons
    assert f"node node-{second} is cordoned (not by clmgit)" in seen.reasons


def test_a_rolled_back_stack_and_outdated_nodes(world, kube, cluster) -> None:
    backends, sim = world
    apply(kube, sim, deployment("echo:1"))
    backends.stacks.statuses[cluster.local_id] = "UPDATE_ROLLBACK_COMPLETE"
    seen = observe(cluster, backends, GATE)
    assert seen == observe(cluster, backends, GATE)
    assert seen.state == UNHEALTHY
    assert seen.reasons == (f"stack {cluster.local_id} is UPDATE_ROLLBACK_COMPLETE",)
    backends.stacks.statuses[cluster.local_id] = "UPDATE_COMPLETE"
    backends.pools.roll(GROUP_TEMPLATE.name, version="2")
    seen = observe(cluster, backends, GATE)
    assert seen.state == PENDING and "2 of 2 instance(s) outdated" in seen.reasons[0]


def test_an_api_server_that_does_not_answer_is_unknown(world, cluster, server,
                                                       kubeconfig) -> None:
    from kubernetes import config

    backends, _ = world
    server.stop()
    api = config.new_client_from_config(str(kubeconfig), context="sandbox")
    clock = FakeClock()
    dead = KubeAPI(api, clock=clock, backoff=Backoff(initial=1, factor=1, maximum=1, timeout=2))
    seen = observe(cluster, HealthBackends(backends.stacks, backends.pools, dead), GATE)
    assert seen.state == UNKNOWN
    assert seen.reasons[0].startswith("cannot read the nodes: ")
