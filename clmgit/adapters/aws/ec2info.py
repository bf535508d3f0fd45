"""What templates may ask EC2 while rendering: an AMI's id by name and owner, and an instance
type's vCPUs, memory, instance storage and architecture.

One `Ec2Info` lives for one render session (one cluster at one SHA): every answer is kept, so a
function called from many templates asks AWS once.
"""

from __future__ import annotations

import threading
from typing import Any

import boto3
from botocore.exceptions import ClientError

from clmgit.accounts import InstanceInfo
from clmgit.adapters.aws.session import aws_errors, make_client
from clmgit.errors import ApplyError

_MEBIBYTE = 1024 * 1024
_GIGABYTE = 1000 * 1000 * 1000


class Ec2Info:
    """Cached EC2 look-ups for one render session."""

    def __init__(self, session: boto3.Session) -> None:
        self._session = session
        self._client: Any = None
        self._lock = threading.Lock()
        self._amis: dict[tuple[str, str], str] = {}
        self._types: dict[str, InstanceInfo] = {}

    def _ec2(self) -> Any:
        if self._client is None:
            self._client = make_client(self._session, "ec2")
        return self._client

    def ami_id(self, name: str, owner: str) -> str:
        """The id of the one image called `name` owned by `owner`; an error if none or several."""
        key = (name, owner)
        with self._lock:
            if key in self._amis:
                return self._amis[key]
            with aws_errors(f"describing the image {name} of owner {owner}"):
                images = self._ec2().describe_images(Filters=[
                    {"Name": "name", "Values": [name]},
                    {"Name": "owner-id", "Values": [owner]},
                ])["Images"]
            if len(images) != 1:
                found = "no image" if not images else "more than one image"
                raise ApplyError(f"{found} found with name {name} and owner {owner}")
            self._amis[key] = images[0]["ImageId"]
            return self._amis[key]

    def instance_info(self, instance_type: str) -> InstanceInfo:
        """vCPUs, memory, instance storage and architecture (`amd64` or `arm64`) of a type."""
        with self._lock:
            if instance_type in self._types:
                return self._types[instance_type]
            with aws_errors(f"describing the instance type {instance_type}"):
                try:
                    found = self._ec2().describe_instance_types(
                        InstanceTypes=[instance_type])["InstanceTypes"]
                except ClientError as e:
                    if "InvalidInstanceType" not in str(e):
                        raise
                    found = []
            if not found:
                raise ApplyError(f"unknown instance type: {instance_type}")
            self._types[instance_type] = _info(found[0])
            return self._types[instance_type]


def _info(described: dict[str, Any]) -> InstanceInfo:
    disks = described.get("InstanceStorageInfo", {}).get("Disks", [])
    if len(disks) > 1:  # CLM refuses these too: no instance type has them today
        raise ApplyError(f"{described['InstanceType']} has {len(disks)} kinds of disks; "
                         "expected 0 or 1")
    architectures = described.get("ProcessorInfo", {}).get("SupportedArchitectures", [])
    if "x86_64" in architectures:
        architecture = "amd64"
    elif "arm64" in architectures:
        architecture = "arm64"
    else:
        raise ApplyError(f"{described['InstanceType']} has no supported CPU architecture "
                         f"({', '.join(architectures)})")
    return InstanceInfo(
        instance_type=described["InstanceType"],
        vcpu=int(described["VCpuInfo"]["DefaultVCpus"]),
        memory=int(described["MemoryInfo"]["SizeInMiB"]) * _MEBIBYTE,
        instance_storage_devices=int(disks[0]["Count"]) if disks else 0,
        instance_storage_device_size=int(disks[0]["SizeInGB"]) * _GIGABYTE if disks else 0,
        architecture=architecture,
    )
