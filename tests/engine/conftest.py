"""Fixtures for the engine: moto in server mode (one per test session, on 127.0.0.1 and a free
port, boto3 talking HTTP to it), the AWS adapters on a fake clock, and a fresh cluster per test."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from clmgit_sandbox.aws import ACCOUNT, REGION
from clmgit_sandbox.doubles import FakeClock

from clmgit.adapters.aws.autoscaling import AutoScalingPools
from clmgit.adapters.aws.cloudformation import CloudFormationStacks
from clmgit.model import Cluster, NodePool
from tests.helpers.aws import FAST


@dataclass
class Calls:
    """The AWS API calls made through a session, with their parameters."""

    made: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def record(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        self.made.append((model.name, dict(params)))

    def names(self) -> list[str]:
        return [name for name, _ in self.made]

    def params(self, name: str) -> list[dict[str, Any]]:
        return [params for n, params in self.made if n == name]


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
def session(moto_endpoint: str, calls: Calls) -> boto3.Session:
    session = boto3.Session(region_name=REGION)
    # Registered before any client exists: clients copy the session's handlers when created.
    session.events.register("before-parameter-build", calls.record)
    return session


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def stacks(session: boto3.Session, clock: FakeClock) -> CloudFormationStacks:
    return CloudFormationStacks(session, clock=clock, backoff=FAST)


@pytest.fixture
def pools(session: boto3.Session, clock: FakeClock) -> AutoScalingPools:
    return AutoScalingPools(session, clock=clock, backoff=FAST)


@pytest.fixture
def aws(session: boto3.Session) -> Any:
    """Plain boto3 clients to look at moto with, by service name: `aws("ec2")`."""
    return lambda service: boto3.Session(region_name=REGION).client(service)


@pytest.fixture
def cluster() -> Cluster:
    """A cluster of its own per test: moto's state lives for the whole session."""
    local_id = f"kube-{uuid.uuid4().hex[:8]}"
    return Cluster(
        id=f"aws:{ACCOUNT}:{REGION}:{local_id}", local_id=local_id, region=REGION,
        node_pools=(NodePool(name="default", profile="worker", min_size=1, max_size=4),),
    )
