"""The node simulator's thread: idle, it stops asking the node pools (an idle sandbox costs no
CPU); a request to the emulator wakes it at once, so nothing that waits on it is slower; given a
token of the cloud's changes, it asks the pools only after one, and the token wakes it too."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from clmgit_sandbox.doubles import FakeNodePools
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubelet import Kubelet
from kubernetes import client, config

from clmgit.engine.nodepools import ASG, PoolState
from clmgit.model import Cluster, NodePool

CLUSTER = Cluster(id="aws:123:eu-central-1:idle", local_id="idle",
                  node_pools=(NodePool(name="workers", profile="worker-default"),))
GROUP = ASG(name="workers-asg", min_size=0, max_size=5, desired_capacity=2,
            launch_template_id="lt-1", launch_template_version="1",
            instance_types=("m5.large",), availability_zones=("eu-central-1a",))
IDLE = 30.0  # far longer than any deadline below: only a wake-up can explain a quick pass


class CountingPools(FakeNodePools):
    """The in-memory pools, remembering when each pass asked them."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[float] = []

    def pool_state(self, cluster: Cluster, pool: str) -> PoolState:
        self.asked.append(time.monotonic())
        return super().pool_state(cluster, pool)

    def paused(self) -> bool:
        """Has the simulator once waited more than a second between passes?"""
        return any(b - a > 1.0 for a, b in zip(self.asked, self.asked[1:], strict=False))


World = tuple[KubeAPIServer, CountingPools, client.ApiClient]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    pools = CountingPools()
    pools.add_group(CLUSTER, "workers", GROUP)
    with KubeAPIServer() as server, Kubelet(server, pools, CLUSTER).start(idle=IDLE):
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        yield server, pools, config.new_client_from_config(str(kubeconfig))


def _until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} not within {timeout} s"
        time.sleep(0.02)


def test_an_idle_simulator_backs_off(world: World) -> None:
    server, pools, _ = world
    _until(lambda: len(server.objects("v1", "Node")) == 2, 10, "two nodes")
    # Passes that change nothing double the pause: after a few seconds, one gap is over 1 s
    # (at a fixed 50 ms there would be a hundred passes and no such gap).
    _until(pools.paused, 15, "a pause of a second")
    settled = len(pools.asked)
    time.sleep(1.0)
    assert len(pools.asked) - settled <= 2


def test_a_request_wakes_an_idle_simulator(world: World) -> None:
    server, pools, api = world
    _until(pools.paused, 15, "a pause of a second")
    apps = client.AppsV1Api(api)
    deployment: Any = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "web:1"}]}}}}
    apps.create_namespaced_deployment("default", deployment)  # the client takes a dict too
    _until(lambda: len(server.objects("v1", "Pod", "default")) == 2, 10, "the pods")
    # An instance launched behind the emulator's back is seen once a client asks anything.
    pools.set_desired_capacity(GROUP.name, 3)
    core = client.CoreV1Api(api)
    _until(lambda: len(core.list_node().items) == 3, 10, "the third node")


def test_given_a_change_token_the_pools_are_asked_only_after_a_change(tmp_path: Path) -> None:
    pools = CountingPools()
    pools.add_group(CLUSTER, "workers", GROUP)
    changes = [0]
    with KubeAPIServer() as server, Kubelet(server, pools, CLUSTER,
                                            cloud_changes=lambda: changes[0]).start(idle=IDLE):
        _until(lambda: len(server.objects("v1", "Node")) == 2, 10, "two nodes")
        api = config.new_client_from_config(str(server.write_kubeconfig(tmp_path / "kc")))
        asked = len(pools.asked)
        for _ in range(5):  # requests wake passes, and none asks the pools while nothing changed
            client.CoreV1Api(api).list_node()
            time.sleep(0.1)
        assert len(pools.asked) == asked
        pools.set_desired_capacity(GROUP.name, 3)
        changes[0] += 1
        # No request to the emulator: the token alone wakes the simulator, long before IDLE.
        _until(lambda: len(server.objects("v1", "Node")) == 3, 5, "the third node")
        assert len(pools.asked) == asked + 1
