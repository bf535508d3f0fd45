"""EC2: launch templates resolved to versions and instance types, and the account's network."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import boto3

from clmgit.adapters.aws.session import aws_errors, make_client


class LaunchTemplates:
    """Launch template versions resolved to numbers, and their instance types, looked up once."""

    def __init__(self, ec2: Any) -> None:
        self._ec2 = ec2
        self._versions: dict[str, tuple[str, str]] = {}  # id -> (default, latest)
        self._types: dict[tuple[str, str], str] = {}

    def version(self, template_id: str, version: str) -> str:
        if not template_id or version not in ("", "$Default", "$Latest"):
            return version
        if template_id not in self._versions:
            raw = self._ec2.describe_launch_templates(LaunchTemplateIds=[template_id])
            lt = raw["LaunchTemplates"][0]
            self._versions[template_id] = (str(lt["DefaultVersionNumber"]),
                                           str(lt["LatestVersionNumber"]))
        default, latest = self._versions[template_id]
        return latest if version == "$Latest" else default

    def instance_type(self, template_id: str, version: str) -> str:
        if (template_id, version) not in self._types:
            raw = self._ec2.describe_launch_template_versions(
                LaunchTemplateId=template_id, Versions=[version])
            data = raw["LaunchTemplateVersions"][0].get("LaunchTemplateData", {})
            self._types[template_id, version] = str(data.get("InstanceType", ""))
        return self._types[template_id, version]


@dataclass(frozen=True)
class Network:
    """What the region's account offers a cluster: its available zones (sorted), the default
    VPC's first subnet per zone (by subnet id), and that VPC's IPv4 CIDR ("" without one)."""

    zones: tuple[str, ...]
    subnets: Mapping[str, str]
    vpc_cidr: str


def network(session: boto3.Session, region: str) -> Network:
    """The account's network in `region`, as `Network` tells it."""
    ec2 = make_client(session, "ec2")
    with aws_errors(f"reading the network of {region}"):
        zones = sorted(
            z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"]
            if z.get("State", "available") == "available"
        )
        vpcs = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"]
        subnets: dict[str, str] = {}
        if vpcs:
            found = ec2.describe_subnets(
                Filters=[{"Name": "vpc-id", "Values": [vpcs[0]["VpcId"]]}])["Subnets"]
            for subnet in sorted(found, key=lambda s: s["SubnetId"]):
                subnets.setdefault(subnet["AvailabilityZone"], subnet["SubnetId"])
    return Network(tuple(zones), subnets, vpcs[0]["CidrBlock"] if vpcs else "")
