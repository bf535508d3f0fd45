"""Fixtures for the Kubernetes engine: the emulator on the test's fake clock (so timestamps it
writes and the SLA's durations agree), the real `KubeAPI` adapter on it, and node pools on moto
with a node simulator that keeps the emulator's nodes in step with the instances."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from kubernetes import config, dynamic

from clmgit.adapters.aws.autoscaling import AutoScalingPools
from clmgit.adapters.aws.cloudformation import CloudFormationStacks
from clmgit.adapters.kube import KubeAPI
from clmgit.engine.clock import Backoff
from clmgit.engine.nodepools import ASG
from clmgit.model import Cluster, NodePool
from clmgit.sandbox.aws import ACCOUNT, REGION
from clmgit.sandbox.doubles import FakeClock
from clmgit.sandbox.kubeapi import KubeAPIServer
from clmgit.sandbox.kubelet import Kubelet

CONTEXT = "sandbox"
FAST = Backoff(initial=1, factor=2, maximum=8, timeout=60)  # fake seconds
#: An Auto Scaling group of two instances for the in-memory node pools.
GROUP_TEMPLATE = ASG(name="default-asg", min_size=0, max_size=4, desired_capacity=2,
                     launch_template_id="lt-1", launch_template_version="1",
                     instance_types=("m5.large",), availability_zones=("eu-central-1a",))

def stamp(clock: FakeClock) -> str:
    return clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server(clock: FakeClock) -> Iterator[KubeAPIServer]:
    """The emulator, writing timestamps from the test's fake clock."""
    with KubeAPIServer(clock=lambda: stamp(clock)) as s:
        yield s


@pytest.fixture
def kubeconfig_path(server: KubeAPIServer, tmp_path: Path) -> Path:
    return server.write_kubeconfig(tmp_path / "kubeconfig", context_names=[CONTEXT])


@pytest.fixture
def kube(kubeconfig_path: Path, clock: FakeClock) -> Iterator[KubeAPI]:
    api = config.new_client_from_config(str(kubeconfig_path), context=CONTEXT)
    yield KubeAPI(api, clock=clock)
    api.close()


@pytest.fixture
def cluster() -> Cluster:
    local_id = f"kube-{uuid.uuid4().hex[:8]}"
    return Cluster(
        id=f"aws:{ACCOUNT}:{REGION}:{local_id}", local_id=local_id, region=REGION,
        node_pools=(NodePool(name="default", profile="worker", min_size=0, max_size=6),),
    )


@pytest.fixture
def stacks(moto_endpoint: str, clock: FakeClock) -> CloudFormationStacks:
    return CloudFormationStacks(boto3.Session(region_name=REGION), clock=clock, backoff=FAST)


@pytest.fixture
def pools(moto_endpoint: str, clock: FakeClock) -> AutoScalingPools:
    return AutoScalingPools(boto3.Session(region_name=REGION), clock=clock, backoff=FAST)


@pytest.fixture
def kubelet(server: KubeAPIServer, pools: AutoScalingPools, cluster: Cluster,
            clock: FakeClock) -> Kubelet:
    """Synced whenever the engine sleeps on the fake clock."""
    sim = Kubelet(server, pools, cluster)
    clock.on_sleep = lambda _: sim.sync()
    return sim



@pytest.fixture
def apply_as_human(kubeconfig_path: Path) -> Iterator[Callable[[dict[str, Any]], None]]:
    """Apply an object as another field manager ("human"), through the official client."""
    api = config.new_client_from_config(str(kubeconfig_path), context=CONTEXT)
    dyn = dynamic.DynamicClient(api, cache_file=str(kubeconfig_path.parent / "discovery.json"))

    def apply(obj: dict[str, Any]) -> None:
        resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        dyn.server_side_apply(resource, body=obj, field_manager="human", force_conflicts=True)

    yield apply
    api.close()
