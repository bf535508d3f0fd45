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
from clmgit_sandbox.aws import ACCOUNT, REGION, moto_changes
from clmgit_sandbox.doubles import FakeClock
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubelet import Kubelet
from kubernetes import config
from kubernetes.dynamic import DynamicClient

from clmgit.adapters.aws.autoscaling import AutoScalingPools
from clmgit.adapters.aws.cloudformation import CloudFormationStacks
from clmgit.adapters.kube import KubeAPI
from clmgit.model import Cluster, NodePool
from tests.helpers.aws import FAST
from tests.helpers.kube import CONTEXT


def stamp(clock: FakeClock) -> str:
    return clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def kube_server(clock: FakeClock) -> Iterator[KubeAPIServer]:
    """The emulator, writing timestamps from the test's fake clock (for this directory, the
    shared `kubeconfig`, `api_client`, `core`, `apps`, `raw_call` ... reach this one)."""
    with KubeAPIServer(clock=lambda: stamp(clock)) as s:
        yield s


@pytest.fixture
def server(kube_server: KubeAPIServer) -> KubeAPIServer:
    return kube_server


@pytest.fixture
def kube(kubeconfig: Path, clock: FakeClock) -> Iterator[KubeAPI]:
    api = config.new_client_from_config(str(kubeconfig), context=CONTEXT)
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
    sim = Kubelet(server, pools, cluster, cloud_changes=moto_changes())
    clock.on_sleep = lambda _: sim.sync()
    return sim



@pytest.fixture
def apply_as_human(dynamic: DynamicClient) -> Callable[[dict[str, Any]], None]:
    """Apply an object as another field manager ("human"), through the official client."""

    def apply(obj: dict[str, Any]) -> None:
        resource = dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        dynamic.server_side_apply(resource, body=obj, field_manager="human", force_conflicts=True)

    return apply
