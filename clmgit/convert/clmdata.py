"""What `convert --check` renders with where it has no registry or no AWS: sample clusters of a
CLM repository (the config items a registry holds for kubernetes-on-aws included), an offline EC2
stand-in, and a stand-in for the cluster's account. Both renderings of a check get the same
values (`clmgit.config.computed` builds them from these), so a difference in output can only come
from the conversion.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import hashlib
import re
from dataclasses import dataclass

from clmgit.adapters.aws.clmaccount import Certificate, Subnet, Vpc
from clmgit.adapters.aws.ec2info import InstanceInfo
from clmgit.config.clmfuncs import Ec2Info
from clmgit.config.computed import KMS_PREFIX
from clmgit.config.values import hosted_zone
from clmgit.errors import ConfigError
from clmgit.model import Cluster, NodePool

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


# -- the cluster's account without AWS --------------------------------------------------------

_VPC_CIDR = "172.31.0.0/16"
_ZONES = "abc"


@dataclass(frozen=True)
class SampleAccount:
    """The account CLM would ask about `cluster` (`clmgit.config.computed.ClmAccount`), made up
    from the record, for a check that may ask EC2 (`ec2`) and nothing else: the registry's VPC or
    one; a subnet per zone (those the `subnets` item lists, else one in each of the region's
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
        raise ConfigError(f"convert --check encrypts nothing ({what})")

    def certificates(self) -> tuple[Certificate, ...]:
        zone = hosted_zone(self.cluster.api_server_url)
        return (Certificate(f"{self._arn('acm')}:certificate/{_digest(zone)[:12]}",
                            (f"*.{zone}",), dt.datetime(2034, 1, 1, tzinfo=dt.UTC)),)

    def put_object(self, bucket: str, key: str, body: bytes) -> None:
        raise ConfigError(f"convert --check uploads nothing (s3://{bucket}/{key})")

    def _arn(self, service: str) -> str:
        account = self.cluster.infrastructure_account.removeprefix("aws:")
        return f"arn:aws:{service}:{self.cluster.region}:{account}"


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
                    channel=channel, environment=env, config_items=registry_items(),
                    node_pools=tuple(pools))
            for env in SAMPLE_ENVIRONMENTS]


def describe_sample(clusters: list[Cluster]) -> str:
    """What a check without a registry rendered, in a phrase."""
    envs = ", ".join(c.environment for c in clusters)
    pools = ", ".join(f"{p.name} ({p.profile}{', spot' if p.discount_strategy == 'spot' else ''})"
                      for p in clusters[0].node_pools) if clusters else "none"
    return f"{len(clusters)} sample clusters (environments {envs}; node pools {pools})"


def registry_items() -> dict[str, str]:
    """The config items a registry holds for a kubernetes-on-aws cluster (`vpc_id` and `subnets`
    are discovered), with certificates and keys made once per process."""
    return {**_PLAIN_ITEMS, **_secrets()}


_PLAIN_ITEMS = {
    "availability_zones": "eu-central-1a,eu-central-1b,eu-central-1c",
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


@functools.cache
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
    # `_decompressed` says the PEM inside is not gzipped; the item is base64 all the same
    # (files.yaml's `data` and a webhook's `caBundle` take it as it is).
    certs = {k: base64.b64encode(cert_pem).decode() for k in (
        "ca_cert_decompressed", "apiserver_cert_decompressed", "etcd_client_ca_cert",
        "etcd_client_server_cert", "worker_cert", "proxy_client_cert", "kubelet_client_cert",
        "admission_controller_cert")}
    keys = {k: base64.b64encode(key_pem).decode() for k in (
        "apiserver_key_decompressed", "etcd_client_server_key", "worker_key", "proxy_client_key",
        "kubelet_client_key", "admission_controller_key", "service_account_private_key")}
    return {**certs, **keys}
