"""The seam to a cluster's account that CLM's computed values need (provisioner/clusterpy.go,
node_pools.go), and the values it answers with: `ClmAccount` (VPC, subnets, KMS, ACM, S3) and
`Ec2Info` (AMIs, instance types), and `Vpc`, `Subnet`, `Certificate`, `InstanceInfo`.

The port and its values live here, in the model tier, so that a render without AWS (`render`,
`diff`, `convert --check`) imports no boto3: `clmgit.adapters.aws.clmaccount` implements the
port with boto3, `clmgit.config.offline` without AWS, and `clmgit_sandbox.clmaccount` in
memory.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Vpc:
    id: str
    cidr: str
    ipv6_cidrs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Subnet:
    id: str
    zone: str
    tags: Mapping[str, str] = field(default_factory=dict)
    ipv6_cidrs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Certificate:
    arn: str
    names: tuple[str, ...]  # the domain name and the alternative names
    not_after: dt.datetime


@dataclass(frozen=True)
class InstanceInfo:
    """One EC2 instance type as CLM describes it (memory and storage in bytes)."""

    instance_type: str
    vcpu: int
    memory: int
    instance_storage_devices: int = 0
    instance_storage_device_size: int = 0
    architecture: str = "amd64"


class Ec2Info(Protocol):
    """What templates may ask EC2 while rendering (CLM's `amiID` and instance-type functions)."""

    def ami_id(self, name: str, owner: str) -> str: ...
    def instance_info(self, instance_type: str) -> InstanceInfo: ...


class ClmAccount(Ec2Info, Protocol):
    """What CLM asks the cluster's account before it renders."""

    def default_vpc(self) -> Vpc: ...
    def vpc(self, vpc_id: str) -> Vpc: ...
    def subnets(self, vpc_id: str) -> Sequence[Subnet]: ...
    def key_arn(self, key_id: str) -> str: ...
    def decrypt(self, ciphertext: bytes, *, what: str) -> bytes: ...
    def encrypt(self, key_id: str, plaintext: bytes, *, what: str) -> bytes: ...
    def certificates(self) -> Sequence[Certificate]: ...
    def put_object(self, bucket: str, key: str, body: bytes) -> None: ...
    def get_object(self, bucket: str, key: str) -> bytes | None: ...
