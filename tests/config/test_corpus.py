"""kubernetes-on-aws (../shared/corpus), converted by the test helper, rendered with CLM's
function library for sample clusters of three environments."""

from __future__ import annotations

import pytest
import yaml

from clmgit.config.defaults import with_defaults
from clmgit.model import Cluster, NodePool

from .conftest import cluster
from .corpus import CorpusEc2, CorpusRenderer, corpus_files, go_cluster

POOLS = (
    NodePool("default-master", "master-default", ("m5.large",), "none", 1, 2, {}),
    NodePool("default-worker", "worker-splitaz", ("m5.large",), "none", 1, 3, {}),
    NodePool("spot", "worker-splitaz", ("m5.xlarge", "m6g.large"), "spot", 0, 3, {}),
    NodePool("karpenter", "worker-karpenter", ("m5.large",), "none", 0, 0, {}),
)
ENVIRONMENTS = ("test", "production", "e2e")
# What the registry (and CLM's discovery, not yet in clmgit: issue 18 §2) sets for a cluster.
REGISTRY_ITEMS = {
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
}
VALUES = {
    "hosted_zone": "kube-1.example.org",
    "vpc_ipv4_cidr": "172.31.0.0/16",
    "vpc_ipv6_cidrs": [],
    "availability_zones": ["eu-central-1a", "eu-central-1b", "eu-central-1c"],
    "subnets": {"eu-central-1a": "subnet-a", "eu-central-1b": "subnet-b",
                "eu-central-1c": "subnet-c", "*": "subnet-a,subnet-b,subnet-c"},
    "load_balancer_certificate": "arn:aws:acm:eu-central-1:123456789012:certificate/x",
}


@pytest.fixture(scope="module")
def renderer(tmp_path_factory: pytest.TempPathFactory) -> CorpusRenderer:
    return CorpusRenderer(corpus_files(tmp_path_factory.mktemp("corpus")), CorpusEc2())


def sample(environment: str, items: dict[str, str] | None = None) -> Cluster:
    return cluster(environment=environment, config_items=items or {}, node_pools=POOLS)


def test_every_template_of_dev_converts_and_compiles(renderer: CorpusRenderer) -> None:
    assert renderer.errors == {}
    assert len(renderer.templates) >= 260


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_config_defaults_render_with_clms_functions(renderer: CorpusRenderer,
                                                    environment: str) -> None:
    defaults = renderer.defaults(sample(environment))
    assert len(defaults) > 400
    assert defaults["etcd_ami"].startswith("ami-")
    assert defaults["logging_s3_bucket"] == "zalando-logging-123456789012-eu-central-1"
    # last wins, as in CLM: the key is written twice in dev's defaults
    assert "deployment_service_cf_update_source_branch_changes" in defaults


def rendered_manifests(renderer: CorpusRenderer, environment: str) -> dict[str, str]:
    defaults = renderer.defaults(sample(environment))
    merged = with_defaults(sample(environment, REGISTRY_ITEMS), defaults)
    root = {"Cluster": go_cluster(merged, dict(merged.config_items)), "Values": VALUES}
    out = {}
    for path in renderer.templates:
        if path.startswith("cluster/manifests/"):
            try:
                out[path] = renderer.render(path, root)
            except Exception as e:  # noqa: BLE001 - collected and reported below
                out[path] = f"FAILED {type(e).__name__}: {e}"
    return out




@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_manifest_renders_and_names_its_objects(renderer: CorpusRenderer,
                                                      environment: str) -> None:
    rendered = rendered_manifests(renderer, environment)
    assert len(rendered) >= 250
    failed = {path: text for path, text in rendered.items() if text.startswith("FAILED")}
    assert failed == {}
    objects = 0
    for path, text in rendered.items():
        for document in yaml.safe_load_all(text):
            if document is None:
                continue
            if path.endswith("deletions.yaml"):
                continue  # a list of what to delete, not an object
            assert document.get("apiVersion") and document.get("kind"), path
            assert document["metadata"]["name"], path
            objects += 1
    assert objects > 300  # 344 objects for the test cluster at dev 93eb84d
