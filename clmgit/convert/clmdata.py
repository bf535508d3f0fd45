"""What `convert --check` renders where it has no registry: sample clusters of a CLM repository,
with the config items a registry holds for kubernetes-on-aws. Without AWS, both renderings of a
check get the made-up answers of `clmgit.config.offline`.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
from collections.abc import Iterable
from dataclasses import replace

from clmgit.model import Cluster, NodePool, is_karpenter, is_master

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
    pools = _with_other_profiles([p for p in SAMPLE_POOLS
                                  if profiles is None or p.profile in profiles], profiles)
    workers = [p for p in pools if not is_master(p.profile, prefix=True)
               and not is_karpenter(p.profile)]
    if workers and not any(p.discount_strategy == "spot" for p in pools):
        pools.append(replace(SAMPLE_POOLS[2], profile=workers[0].profile))
    return [Cluster(id=f"aws:123456789012:eu-central-1:kube-{env}", alias=f"kube-{env}",
                    infrastructure_account="aws:123456789012", region="eu-central-1",
                    local_id=f"kube-{env}", api_server_url=f"https://kube-{env}.example.org",
                    channel=channel, environment=env, config_items=registry_items(),
                    node_pools=tuple(pools))
            for env in SAMPLE_ENVIRONMENTS]


#: The node pools of the coverage variants (`clmgit.convert.variants`): every shape a node pool
#: template branches on — a master; taints (the one the Skipper pool's gate compares with; two
#: on a Karpenter pool, one without a value, which kubernetes-on-aws's Auto Scaling group pools
#: cannot take: they split each at `=`), labels, a subset of the zones, spot and arm64 types;
#: t2 types (`supports_t2_unlimited`); Karpenter pools with CLM's default types and
#: requirements, and with types of their own.
_REQUIREMENTS = ("- key: karpenter.k8s.aws/instance-generation\n  operator: Gt\n  values: ['5']\n"
                 "- key: topology.kubernetes.io/zone\n  operator: In\n"
                 "  values: [eu-central-1a, eu-central-1b]\n")
VARIANT_POOLS = (
    *SAMPLE_POOLS[:2],  # the master and the on-demand workers
    NodePool("dedicated-arm", "worker-splitaz", ("m6g.large", "m6gd.xlarge"), "spot", 0, 4, {
        "taints": "dedicated=skipper-ingress:NoSchedule",
        "labels": "dedicated=skipper-ingress,team=infra",
        "availability_zones": "eu-central-1a,eu-central-1b"}),
    NodePool("burst", "worker-splitaz", ("t2.medium", "t2.large"), "none", 3, 6, {}),
    NodePool("karpenter", "worker-karpenter", ("default-for-karpenter",), "none", 0, 0, {
        "requirements": _REQUIREMENTS,
        "taints": "dedicated=batch:NoSchedule,example.org/gpu:NoExecute",
        "labels": "dedicated=batch", "consolidation": "false"}),
    NodePool("karpenter-typed", "worker-karpenter", ("c6g.large", "m6g.large"), "spot", 0, 0, {
        "consolidation_policy": "WhenEmpty", "consolidate_after": "10m"}),
)


def tree_profiles(paths: Iterable[str]) -> frozenset[str]:
    """The node pool profiles of a tree: the folders of `cluster/node-pools/`."""
    return frozenset(p.split("/")[2] for p in paths
                     if p.startswith("cluster/node-pools/") and p.count("/") >= 3)


def variant_pools(profiles: frozenset[str] | None = None) -> list[NodePool]:
    """`VARIANT_POOLS` whose profile the tree has, and an on-demand pool of every other
    profile."""
    pools = [p for p in VARIANT_POOLS if profiles is None or p.profile in profiles]
    return _with_other_profiles(pools, profiles)


def describe_sample(clusters: list[Cluster]) -> str:
    """What a check without a registry rendered, in a phrase."""
    envs = ", ".join(c.environment for c in clusters)
    pools = ", ".join(f"{p.name} ({p.profile}{', spot' if p.discount_strategy == 'spot' else ''})"
                      for p in clusters[0].node_pools) if clusters else "none"
    return f"{len(clusters)} sample clusters (environments {envs}; node pools {pools})"


def _with_other_profiles(pools: list[NodePool], profiles: frozenset[str] | None,
                         ) -> list[NodePool]:
    covered = {p.profile for p in pools}
    return pools + [NodePool(f"pool-{profile}", profile, ("m5.large",), "none", 1, 3, {})
                    for profile in sorted((profiles or frozenset()) - covered)]


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
