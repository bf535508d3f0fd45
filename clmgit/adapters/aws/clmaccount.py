"""What CLM asks a cluster's account before it renders (provisioner/clusterpy.go, node_pools.go):
the VPC and its subnets, KMS keys (resolve an alias, decrypt `aws:kms:` config items, encrypt
generated files), ACM certificates, S3 for the generated files; and what templates may ask EC2
while rendering (the `Ec2Info` port): an AMI's id by name and owner, an instance type's vCPUs,
memory, instance storage and architecture.

One `ClmAccount` lives for one render session (one cluster at one SHA) and keeps its answers: a
function called from many templates asks AWS once.
Decrypted plaintext is returned, never logged, and never part of an error message.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Mapping
from typing import Any

import boto3
from botocore.exceptions import ClientError

from clmgit.accounts import Certificate, InstanceInfo, Subnet, Vpc
from clmgit.adapters.aws.session import aws_errors, make_client
from clmgit.errors import ApplyError

_MEBIBYTE = 1024 * 1024
_GIGABYTE = 1000 * 1000 * 1000


class ClmAccount:
    """boto3 answers for one render session, each asked once."""

    def __init__(self, session: boto3.Session) -> None:
        self._session = session
        self._clients: dict[str, Any] = {}
        self._lock = threading.RLock()  # answers kept under it may need a client first
        self._keys: dict[str, str] = {}
        self._certificates: tuple[Certificate, ...] | None = None
        self._buckets: set[str] = set()
        self._amis: dict[tuple[str, str], str] = {}
        self._types: dict[str, InstanceInfo] = {}

    def _client(self, service: str) -> Any:
        with self._lock:
            if service not in self._clients:
                self._clients[service] = make_client(self._session, service)
            return self._clients[service]

    @property
    def region(self) -> str:
        return str(self._session.region_name or "")

    def ami_id(self, name: str, owner: str) -> str:
        """The id of the one image called `name` owned by `owner`; an error if none or several."""
        key = (name, owner)
        with self._lock:
            if key not in self._amis:
                with aws_errors(f"describing the image {name} of owner {owner}"):
                    images = self._client("ec2").describe_images(Filters=[
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
            if instance_type not in self._types:
                with aws_errors(f"describing the instance type {instance_type}"):
                    try:
                        found = self._client("ec2").describe_instance_types(
                            InstanceTypes=[instance_type])["InstanceTypes"]
                    except ClientError as e:
                        if "InvalidInstanceType" not in str(e):
                            raise
                        found = []
                if not found:
                    raise ApplyError(f"unknown instance type: {instance_type}")
                self._types[instance_type] = _instance_info(found[0])
            return self._types[instance_type]

    def default_vpc(self) -> Vpc:
        """The only VPC of the region, else the default one (as CLM finds it)."""
        with aws_errors("describing the VPCs"):
            vpcs = self._client("ec2").describe_vpcs()["Vpcs"]
        found = vpcs if len(vpcs) == 1 else [v for v in vpcs if v.get("IsDefault")]
        if not found:
            raise ApplyError(f"no default VPC in {self.region}; set the config item vpc_id")
        return _vpc(found[0])

    def vpc(self, vpc_id: str) -> Vpc:
        with aws_errors(f"describing the VPC {vpc_id}"):
            vpcs = self._client("ec2").describe_vpcs(VpcIds=[vpc_id])["Vpcs"]
        if len(vpcs) != 1:
            raise ApplyError(f"found {len(vpcs)} VPCs with id {vpc_id}, expected 1")
        return _vpc(vpcs[0])

    def subnets(self, vpc_id: str) -> tuple[Subnet, ...]:
        with aws_errors(f"describing the subnets of {vpc_id}"):
            found = self._client("ec2").describe_subnets(
                Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])["Subnets"]
        return tuple(Subnet(
            id=s["SubnetId"], zone=s["AvailabilityZone"],
            tags={t["Key"]: t.get("Value", "") for t in s.get("Tags", [])},
            ipv6_cidrs=tuple(a["Ipv6CidrBlock"] for a in s.get("Ipv6CidrBlockAssociationSet", [])),
        ) for s in found)

    def key_arn(self, key_id: str) -> str:
        """The ARN of a KMS key given by id or alias (`alias/etcd-cluster`)."""
        with self._lock:
            if key_id not in self._keys:
                with aws_errors(f"describing the KMS key {key_id}"):
                    meta = self._client("kms").describe_key(KeyId=key_id)["KeyMetadata"]
                self._keys[key_id] = meta["Arn"]
            return self._keys[key_id]

    def decrypt(self, ciphertext: bytes, *, what: str) -> bytes:
        """KMS plaintext of `ciphertext`; an error names `what`, never the value."""
        try:
            return bytes(self._client("kms").decrypt(CiphertextBlob=ciphertext)["Plaintext"])
        except ClientError as e:
            code = e.response.get("Error", {}).get("Code", "Error")
            raise ApplyError(f"decrypting {what} with KMS: {code}") from None

    def encrypt(self, key_id: str, plaintext: bytes, *, what: str) -> bytes:
        try:
            blob = self._client("kms").encrypt(KeyId=key_id, Plaintext=plaintext)
        except ClientError as e:
            code = e.response.get("Error", {}).get("Code", "Error")
            raise ApplyError(f"encrypting {what} with KMS key {key_id}: {code}") from None
        return bytes(blob["CiphertextBlob"])

    def certificates(self) -> tuple[Certificate, ...]:
        """ACM's issued certificates with their names and expiry."""
        with self._lock:
            if self._certificates is None:
                acm = self._client("acm")
                found = []
                with aws_errors("listing the ACM certificates"):
                    pages = acm.get_paginator("list_certificates").paginate(
                        CertificateStatuses=["ISSUED"])
                    for page in pages:
                        for summary in page["CertificateSummaryList"]:
                            found.append(_certificate(acm.describe_certificate(
                                CertificateArn=summary["CertificateArn"])["Certificate"]))
                self._certificates = tuple(found)
            return self._certificates

    def put_object(self, bucket: str, key: str, body: bytes) -> None:
        """`body` at s3://bucket/key, the bucket made first if this account lacks it."""
        s3 = self._client("s3")
        with aws_errors(f"uploading s3://{bucket}/{key}"):
            if bucket not in self._buckets:
                try:
                    s3.head_bucket(Bucket=bucket)
                except ClientError:
                    config = ({} if self.region == "us-east-1" else
                              {"CreateBucketConfiguration": {"LocationConstraint": self.region}})
                    s3.create_bucket(Bucket=bucket, **config)
                self._buckets.add(bucket)
            s3.put_object(Bucket=bucket, Key=key, Body=body)

    def get_object(self, bucket: str, key: str) -> bytes | None:
        """The object at s3://bucket/key; None if it (or the bucket) does not exist."""
        with aws_errors(f"reading s3://{bucket}/{key}"):
            try:
                return bytes(self._client("s3").get_object(Bucket=bucket, Key=key)["Body"].read())
            except ClientError as e:
                if e.response.get("Error", {}).get("Code") in ("NoSuchKey", "NoSuchBucket", "404"):
                    return None
                raise


def _vpc(raw: Mapping[str, Any]) -> Vpc:
    return Vpc(raw["VpcId"], raw.get("CidrBlock", ""),
               tuple(a["Ipv6CidrBlock"] for a in raw.get("Ipv6CidrBlockAssociationSet", [])))


def _certificate(raw: Mapping[str, Any]) -> Certificate:
    names = (raw.get("DomainName", ""), *raw.get("SubjectAlternativeNames", []))
    not_after = raw.get("NotAfter") or dt.datetime.max.replace(tzinfo=dt.UTC)
    return Certificate(raw["CertificateArn"], tuple(dict.fromkeys(n for n in names if n)),
                       not_after)


def _instance_info(described: Mapping[str, Any]) -> InstanceInfo:
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
