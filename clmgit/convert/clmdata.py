"""CLM's template data — `.Cluster`, `.NodePool`, `.Values` with CLM's Go field names — made from
a clmgit registry record; and what `convert --check` renders with when it has no registry or no
AWS: sample clusters and an offline EC2 stand-in.

Both renderings of a check (the Go original and the converted Jinja) get these same values, so a
difference in output can only come from the conversion.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from clmgit.adapters.aws.ec2info import InstanceInfo
from clmgit.model import Cluster, NodePool

_MIB = 2**20


@dataclass(frozen=True)
class GoInstanceInfo:
    """`.Values.InstanceInfo` of a node-pool template as CLM hands it over (methods included)."""

    info: InstanceInfo

    @property
    def InstanceType(self) -> str:
        return self.info.instance_type

    @property
    def VCPU(self) -> int:
        return self.info.vcpu

    @property
    def Memory(self) -> int:
        return self.info.memory

    @property
    def Architecture(self) -> str:
        return self.info.architecture

    def AvailableStorage(self, storage_scale: float, root_size: int,
                         root_scale: float) -> int:
        """Bytes for pods: the instance storage scaled, or the root volume's if there is none."""
        if self.info.instance_storage_devices == 0:
            return int(root_size * root_scale)
        return int(storage_scale * self.info.instance_storage_devices
                   * self.info.instance_storage_device_size)

    def MemoryFraction(self, percent: int) -> int:
        return percent * self.info.memory // 100


def go_pool(pool: NodePool) -> dict[str, Any]:
    """`.NodePool` (and an entry of `.Cluster.NodePools`)."""
    items = dict(pool.config_items)
    taints = []
    for taint in filter(None, items.get("taints", "").split(",")):
        key_value, _, effect = taint.partition(":")
        key, _, value = key_value.partition("=")
        taints.append({"Key": key, "Value": value, "Effect": effect})
    return {
        "Name": pool.name, "Profile": pool.profile, "InstanceTypes": list(pool.instance_types),
        "DiscountStrategy": pool.discount_strategy, "MinSize": pool.min_size,
        "MaxSize": pool.max_size, "ConfigItems": items,
        "IsSpot": pool.discount_strategy == "spot", "IsMaster": pool.profile.startswith("master"),
        "IsKarpenter": pool.profile == "worker-karpenter", "Taints": taints,
        "KarpenterInstanceTypeStrategy": (
            "default-for-karpenter" if pool.instance_types == ("default-for-karpenter",)
            else "custom"),
        "KarpenterRequirements": [],
    }


def go_cluster(cluster: Cluster) -> dict[str, Any]:
    """`.Cluster`: the record with its config items as they are (defaults merged or not)."""
    return {
        "ID": cluster.id, "LocalID": cluster.local_id, "Alias": cluster.alias,
        "Environment": cluster.environment, "Region": cluster.region,
        "InfrastructureAccount": cluster.infrastructure_account,
        "APIServerURL": cluster.api_server_url, "Owner": cluster.owner,
        "Channel": cluster.channel, "Provider": cluster.provider,
        "CriticalityLevel": cluster.criticality_level, "LifecycleStatus": cluster.lifecycle_status,
        "ConfigItems": dict(cluster.config_items),
        "NodePools": [go_pool(p) for p in cluster.node_pools],
    }


def go_values(cluster: Cluster) -> dict[str, Any]:
    """`.Values`: the facts CLM looks up in the cluster's account before rendering (VPC,
    subnets, hosted zone, stack outputs), derived from the record: a check has no account to
    ask, and both renderings get the same."""
    host = urlsplit(cluster.api_server_url).hostname or f"{cluster.local_id}.example.org"
    zones = [f"{cluster.region}{z}" for z in "abc"]
    subnets = {z: "subnet-" + _digest(cluster.id, z)[:17] for z in zones}
    account = cluster.infrastructure_account.rpartition(":")[2]
    return {
        "hosted_zone": host,
        "vpc_ipv4_cidr": "172.31.0.0/16",
        "vpc_ipv6_cidrs": [],
        "availability_zones": zones,
        "subnets": {**subnets, "*": ",".join(subnets[z] for z in zones)},
        "load_balancer_certificate":
            f"arn:aws:acm:{cluster.region}:{account}:certificate/{_digest(cluster.id)[:12]}",
        "supports_t2_unlimited": True,
        "S3GeneratedFilesPath": f"s3://{cluster.local_id}-files/generated/files.tar.gz",
        "ClusterStackOutputs": {"EtcdEncryptionKey": _digest(cluster.id, "etcd")[:16]},
        "etcd_kms_key_arn": f"arn:aws:kms:{cluster.region}:{account}:key/etcd",
    }


def pool_values(cluster: Cluster, pool: NodePool, ec2: Any) -> dict[str, Any]:
    """`.Values` of a node pool's templates: the cluster's plus its first instance type and the
    user data CLM passes to the pool's stack."""
    first = pool.instance_types[0] if pool.instance_types else "m5.large"
    if first == "default-for-karpenter":
        first = "m5.large"
    return {**go_values(cluster), "InstanceInfo": GoInstanceInfo(ec2.instance_info(first)),
            "UserData": "H4sIAAAAAAAA/w=="}


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
    generation means arm64). Used on both sides of a check."""

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


# -- sample clusters ------------------------------------------------------------------------------

SAMPLE_ENVIRONMENTS = ("test", "production", "e2e")
SAMPLE_POOLS = (
    NodePool("default-master", "master-default", ("m5.large",), "none", 1, 2, {}),
    NodePool("default-worker", "worker-splitaz", ("m5.large",), "none", 3, 6, {}),
    NodePool("spot", "worker-splitaz", ("m5.xlarge", "m6g.large"), "spot", 0, 3, {}),
    NodePool("karpenter", "worker-karpenter", ("m5.large",), "none", 0, 0, {}),
)


def sample_clusters(channel: str = "dev", profiles: frozenset[str] | None = None,
                    ) -> list[Cluster]:
    """One cluster per environment of `SAMPLE_ENVIRONMENTS`, with the config items a registry
    holds for a kubernetes-on-aws cluster (certificates made here). Node pools: those of
    `SAMPLE_POOLS` whose profile the tree has (`profiles`; None: all), then one on-demand pool
    for every other profile of the tree, and a spot pool when no spot pool is left."""
    pools = [p for p in SAMPLE_POOLS if profiles is None or p.profile in profiles]
    covered = {p.profile for p in pools}
    pools += [NodePool(f"pool-{profile}", profile, ("m5.large",), "none", 1, 3, {})
              for profile in sorted((profiles or frozenset()) - covered)]
    workers = [p for p in pools if not p.profile.startswith("master")
               and p.profile != "worker-karpenter"]
    if workers and not any(p.discount_strategy == "spot" for p in pools):
        pools.append(NodePool("spot", workers[0].profile, ("m5.xlarge", "m6g.large"), "spot",
                              0, 3, {}))
    return [Cluster(id=f"aws:123456789012:eu-central-1:kube-{env}", alias=f"kube-{env}",
                    infrastructure_account="aws:123456789012", region="eu-central-1",
                    local_id=f"kube-{env}", api_server_url=f"https://kube-{env}.example.org",
                    channel=channel, environment=env, config_items=_registry_items(),
                    node_pools=tuple(pools))
            for env in SAMPLE_ENVIRONMENTS]


def describe_sample(clusters: list[Cluster]) -> str:
    """What a check without a registry rendered, in a phrase."""
    envs = ", ".join(c.environment for c in clusters)
    pools = ", ".join(f"{p.name} ({p.profile}{', spot' if p.discount_strategy == 'spot' else ''})"
                      for p in clusters[0].node_pools) if clusters else "none"
    return f"{len(clusters)} sample clusters (environments {envs}; node pools {pools})"


@functools.cache
def _registry_items() -> dict[str, str]:
    return {**_PLAIN_ITEMS, **_secrets()}


_PLAIN_ITEMS = {
    "vpc_id": "vpc-0123456789abcdef0",
    "availability_zones": "eu-central-1a,eu-central-1b,eu-central-1c",
    "ca_cert_decompressed": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    "etcd_endpoints": "https://etcd-server.etcd.example.org:2379",
    "etcd_s3_backup_bucket": "zalando-etcd-backup-123456789012-eu-central-1",
    "emergency_access_service_opsgenie_api_key": "opsgenie-key",
    "skipper_ingress_encryption_key": "encryption-key",
    "skipper_oauth2_redirect_uri_path": "/.well-known/oauth2-callback",
    "skipper_oauth2_auth_url": "https://auth.example.org/oauth2/authorize",
    "skipper_oauth2_token_url": "https://auth.example.org/oauth2/token",
    "skipper_oauth2_cookie_name": "oauth-token",
    "skipper_oauth2_ui_login": "true",
    "skipper_oauth2_ui_login_tokeninfo_keys": "uid",
    "vpa_webhook_cert": "Y2VydA==",
    "vpa_webhook_key": "a2V5",
    "zmon_root_account_role": "arn:aws:iam::123456789012:role/zmon",
    "apiserver_etcd_prefix": "/registry",
    "apiserver_business_partner_ids": "810d1",
}


def _secrets() -> dict[str, str]:
    """Certificates and keys as the registry holds them (base64 of PEM), one key for all."""
    from cryptography import x509  # only a check without a registry needs them
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-sample")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1)
            .not_valid_before(dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
            .not_valid_after(dt.datetime(2034, 1, 1, tzinfo=dt.UTC))
            .sign(key, hashes.SHA256()))
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    certs = {k: base64.b64encode(cert_pem).decode() for k in (
        "etcd_client_ca_cert", "etcd_client_server_cert", "worker_cert", "proxy_client_cert",
        "kubelet_client_cert", "admission_controller_cert")}
    keys = {k: base64.b64encode(key_pem).decode() for k in (
        "etcd_client_server_key", "worker_key", "proxy_client_key", "kubelet_client_key",
        "admission_controller_key", "service_account_private_key")}
    return {**certs, **keys, "apiserver_cert_decompressed": cert_pem.decode(),
            "apiserver_key_decompressed": key_pem.decode()}
