"""kubernetes-on-aws (../shared/corpus), converted by the test helper, rendered with CLM's
function library for sample clusters of three environments."""

from __future__ import annotations

import pytest

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


@pytest.fixture(scope="module")
def renderer(tmp_path_factory: pytest.TempPathFactory) -> CorpusRenderer:
    return CorpusRenderer(corpus_files(tmp_path_factory.mktemp("corpus")), CorpusEc2())


def sample(environment: str) -> Cluster:
    return cluster(environment=environment, config_items={}, node_pools=POOLS)


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
    merged = with_defaults(sample(environment), renderer.defaults(sample(environment)))
    root = {"Cluster": go_cluster(merged, dict(merged.config_items)), "Values": {}}
    out = {}
    for path in renderer.templates:
        if path.startswith("cluster/manifests/"):
            try:
                out[path] = renderer.render(path, root)
            except Exception as e:  # noqa: BLE001 - collected and reported below
                out[path] = f"FAILED {type(e).__name__}: {e}"
    return out


