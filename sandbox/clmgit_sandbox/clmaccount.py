"""An in-memory `ClmAccount` (`clmgit.config.computed`): a cluster's account as CLM asks it —
instance types, AMIs, a VPC with subnets, KMS keys, ACM certificates, S3 — for unit tests and
benchmarks of rendering. tests/config/test_computed.py runs the same paths on moto.

Its "KMS" is reversible but not a cipher: `encrypt` wraps the plaintext with the key id, so a test
can see which key was used. Production code never imports this module.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from clmgit.accounts import Certificate, InstanceInfo, Subnet, Vpc
from clmgit.errors import ApplyError

_MIB = 2**20

#: Instance types as EC2 describes them (memory and storage in bytes).
INSTANCE_TYPES = {
    "t2.medium": InstanceInfo("t2.medium", 2, 4096 * _MIB),
    "t3.medium": InstanceInfo("t3.medium", 2, 4096 * _MIB),
    "m5.large": InstanceInfo("m5.large", 2, 8192 * _MIB),
    "m5.xlarge": InstanceInfo("m5.xlarge", 4, 16384 * _MIB),
    "m6g.large": InstanceInfo("m6g.large", 2, 8192 * _MIB, architecture="arm64"),
    "c5d.2xlarge": InstanceInfo("c5d.2xlarge", 8, 16384 * _MIB, 1, 200 * 10**9),
}
_KMS_MARK = b"memory-kms:"


@dataclass
class MemoryClmAccount:
    """One account in memory. `calls` counts what was asked, to check that answers are kept."""

    region: str = "eu-central-1"
    instance_types: Mapping[str, InstanceInfo] = field(default_factory=lambda: INSTANCE_TYPES)
    vpcs: Sequence[Vpc] = (Vpc("vpc-0000000000000000a", "172.31.0.0/16"),)
    default_vpc_id: str = "vpc-0000000000000000a"
    subnet_list: Sequence[Subnet] = ()
    keys: Mapping[str, str] = field(default_factory=dict)  # alias or id → ARN
    certificate_list: Sequence[Certificate] = ()
    objects: dict[tuple[str, str], bytes] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        if not self.subnet_list:
            self.subnet_list = tuple(  # ids as EC2 shapes them: 17 hex digits
                Subnet(f"subnet-{z:0>17}", f"{self.region}{z}") for z in "abc")

    def ami_id(self, name: str, owner: str) -> str:
        self.calls["ami_id"] += 1
        return "ami-" + hashlib.sha256(f"{owner}/{name}".encode()).hexdigest()[:17]

    def instance_info(self, instance_type: str) -> InstanceInfo:
        self.calls["instance_info"] += 1
        if instance_type not in self.instance_types:
            raise ApplyError(f"unknown instance type: {instance_type}")
        return self.instance_types[instance_type]

    def default_vpc(self) -> Vpc:
        self.calls["default_vpc"] += 1
        return self.vpc(self.default_vpc_id)

    def vpc(self, vpc_id: str) -> Vpc:
        self.calls["vpc"] += 1
        for vpc in self.vpcs:
            if vpc.id == vpc_id:
                return vpc
        raise ApplyError(f"found 0 VPCs with id {vpc_id}, expected 1")

    def subnets(self, vpc_id: str) -> tuple[Subnet, ...]:
        self.calls["subnets"] += 1
        return tuple(self.subnet_list)

    def key_arn(self, key_id: str) -> str:
        self.calls["key_arn"] += 1
        if key_id not in self.keys:
            raise ApplyError(f"describing the KMS key {key_id}: NotFoundException")
        return self.keys[key_id]

    def encrypt(self, key_id: str, plaintext: bytes, *, what: str) -> bytes:
        self.calls["encrypt"] += 1
        return _KMS_MARK + key_id.encode() + b"\0" + plaintext

    def decrypt(self, ciphertext: bytes, *, what: str) -> bytes:
        self.calls["decrypt"] += 1
        if not ciphertext.startswith(_KMS_MARK):
            raise ApplyError(f"decrypting {what} with KMS: InvalidCiphertextException")
        return ciphertext.split(b"\0", 1)[1]

    def certificates(self) -> tuple[Certificate, ...]:
        self.calls["certificates"] += 1
        return tuple(self.certificate_list)

    def put_object(self, bucket: str, key: str, body: bytes) -> None:
        self.calls["put_object"] += 1
        self.objects[bucket, key] = body

    def get_object(self, bucket: str, key: str) -> bytes | None:
        self.calls["get_object"] += 1
        return self.objects.get((bucket, key))


def certificate(arn: str, *names: str, days: int = 365) -> Certificate:
    """A certificate valid for `days` from 2026-01-01."""
    return Certificate(arn, names, dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
                       + dt.timedelta(days=days))
