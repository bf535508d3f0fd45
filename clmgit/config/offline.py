"""Renders without AWS: the answers CLM's computed values would ask the cluster's account for,
made up from the registry record and instance type names, the same for every call. `clmgit
convert --check` renders both sides with them, and `render` and `diff` in CLM's layout preview
with them, so a difference in output can only come from the templates; `reconcile --dry-run`
asks the real account.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import hashlib
import re
from dataclasses import dataclass

from clmgit.accounts import Certificate, Ec2Info, InstanceInfo, Subnet, Vpc
from clmgit.config.computed import KMS_PREFIX
from clmgit.config.values import hosted_zone
from clmgit.errors import ConfigError
from clmgit.layout import Layout
from clmgit.model import Cluster


def preview_account(cluster: Cluster, layout: Layout) -> OfflineAccount | None:
    """What a preview (`render`, `diff`) renders `cluster` with: in CLM's layout its account made
    up, EC2's answers read from names; in clmgit's, which asks AWS nothing, none."""
    return OfflineAccount(cluster, OfflineEc2()) if layout.clm else None


_MIB = 2**20


def _digest(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


# -- EC2 without AWS --------------------------------------------------------------------------

_SIZES = {"nano": 1, "micro": 1, "small": 1, "medium": 1, "large": 2, "xlarge": 4, "metal": 96}
_MEMORY_PER_VCPU = {"c": 2, "m": 4, "r": 8, "x": 16, "z": 8, "t": 4, "i": 8, "d": 8, "g": 4}
_TYPE_RE = re.compile(
    r"^([a-z]+)(\d+)([a-z-]*)\.(\d*)(nano|micro|small|medium|large|xlarge|metal)$")


class OfflineEc2:
    """EC2's answers without AWS, the same for every call: an AMI id made from its name and
    owner, and an instance type's vCPUs, memory, storage and architecture read from its name
    (`m5d.2xlarge`: 8 vCPUs, 4 GiB each for family m, one local disk, amd64; a `g` after the
    generation means arm64)."""

    def ami_id(self, name: str, owner: str) -> str:
        return "ami-" + _digest(owner, name)[:17]

    @functools.lru_cache(maxsize=256)  # noqa: B019 - a few types, instances live for a command
    def instance_info(self, instance_type: str) -> InstanceInfo:
        m = _TYPE_RE.match(instance_type)
        if m is None:
            return InstanceInfo(instance_type, 2, 8192 * _MIB)
        family, _generation, extra, multiple, size = m.groups()
        vcpu = _SIZES[size] * (int(multiple) if multiple else 1)
        memory = vcpu * _MEMORY_PER_VCPU.get(family[0], 4) * 1024 * _MIB
        disks = 1 if "d" in extra else 0
        return InstanceInfo(instance_type, vcpu, memory, disks, 75 * vcpu * 10**9 if disks else 0,
                            architecture="arm64" if extra.startswith("g") else "amd64")


# -- the cluster's account without AWS --------------------------------------------------------

_VPC_CIDR = "172.31.0.0/16"
_ZONES = "abc"


@dataclass(frozen=True)
class OfflineAccount:
    """The account CLM would ask about `cluster` (`clmgit.accounts.ClmAccount`), made up
    from the record, for a render that may ask EC2 (`ec2`) and nothing else: the registry's VPC
    or one; a subnet per zone (those the `subnets` item lists, else one in each of the region's
    zones a, b, c); a certificate for the API server's zone; KMS keys by their alias. There is no
    KMS: an `aws:kms:` item reads as written. Nothing is encrypted or uploaded."""

    cluster: Cluster
    ec2: Ec2Info

    def ami_id(self, name: str, owner: str) -> str:
        return self.ec2.ami_id(name, owner)

    def instance_info(self, instance_type: str) -> InstanceInfo:
        return self.ec2.instance_info(instance_type)

    def default_vpc(self) -> Vpc:
        return self.vpc("vpc-" + _digest(self.cluster.id)[:17])

    def vpc(self, vpc_id: str) -> Vpc:
        return Vpc(vpc_id, _VPC_CIDR)

    def subnets(self, vpc_id: str) -> tuple[Subnet, ...]:
        listed = self.cluster.config_items.get("subnets")
        ids = (listed.split(",") if listed else
               ["subnet-" + _digest(self.cluster.id, zone)[:17] for zone in _ZONES])
        return tuple(Subnet(subnet, self.cluster.region + _ZONES[i % len(_ZONES)])
                     for i, subnet in enumerate(ids))

    def key_arn(self, key_id: str) -> str:
        return f"{self._arn('kms')}:key/{key_id.removeprefix('alias/')}"

    def decrypt(self, ciphertext: bytes, *, what: str) -> bytes:
        return KMS_PREFIX.encode() + base64.b64encode(ciphertext)

    def encrypt(self, key_id: str, plaintext: bytes, *, what: str) -> bytes:
        raise ConfigError(f"a render without AWS encrypts nothing ({what})")

    def certificates(self) -> tuple[Certificate, ...]:
        zone = hosted_zone(self.cluster.api_server_url)
        return (Certificate(f"{self._arn('acm')}:certificate/{_digest(zone)[:12]}",
                            (f"*.{zone}",), dt.datetime(2034, 1, 1, tzinfo=dt.UTC)),)

    def put_object(self, bucket: str, key: str, body: bytes) -> None:
        raise ConfigError(f"a render without AWS uploads nothing (s3://{bucket}/{key})")

    def get_object(self, bucket: str, key: str) -> bytes | None:
        return None  # no account, no objects

    def _arn(self, service: str) -> str:
        account = self.cluster.infrastructure_account.removeprefix("aws:")
        return f"arn:aws:{service}:{self.cluster.region}:{account}"
