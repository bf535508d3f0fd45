"""kubernetes-on-aws (../shared/corpus, dev) converted by `clmgit.convert` and rendered by the
project's own renderer (`ClusterRenderer`), with the values it computes on an in-memory account:
CLM's data (`Cluster`, `Values`, `NodePool`) comes from the renderer, not from the test."""

from __future__ import annotations

import base64
import gzip

import pytest
import yaml

from clmgit.config.render import ClusterRenderer
from clmgit.config.source import ConfigTree
from clmgit.convert.tree import convert_tree
from tests.helpers.corpus import OUTPUTS, POOLS, REGISTRY_ITEMS, CorpusEc2, corpus_files, sample


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> ConfigTree:
    files = corpus_files(tmp_path_factory.mktemp("corpus"))
    conversion = convert_tree({p: t.encode() for p, t in files.items()})
    assert conversion.refused == []
    return ConfigTree("dev", {p: t.encode() for p, t in conversion.files.items()})


@pytest.mark.parametrize("environment", ["test", "production"])
def test_the_real_renderer_renders_the_converted_corpus(tree: ConfigTree,
                                                        environment: str) -> None:
    account = CorpusEc2()
    r = ClusterRenderer(tree, sample(environment, REGISTRY_ITEMS), account=account)
    assert r.cluster.config_items["etcd_ami"].startswith("ami-")  # defaults asked EC2
    components = r.render_manifests(OUTPUTS)
    assert sum(len(c.objects) for c in components) > 300
    deletions, _ = r.render_deletions(OUTPUTS)
    assert deletions.pre_apply or deletions.post_apply
    main = yaml.load(r.render_stack("cluster/cluster.yaml", OUTPUTS).text,
                     Loader=yaml.BaseLoader)
    assert main["Resources"]
    for pool in POOLS:
        if pool.profile == "worker-karpenter":
            continue  # no stack: its provisioners.yaml is applied as manifests ([5/8] §3)
        stack = r.render_node_pool_stack(pool.name, OUTPUTS)
        user_data = yaml.load(stack.text, Loader=yaml.BaseLoader)
        text = repr(user_data)
        assert "H4sI" in text  # gzip, base64: CLM's user data
    assert account.calls["subnets"] == 1  # discovery once per render session
    master_user_data = r.clm.rendered["cluster/node-pools/master-default/userdata.yaml",
                                      "default-master"]
    path = next(p for p in r.clm.generated if "/master/" in p)
    assert path in master_user_data
    assert gzip.decompress(base64.b64decode(r.clm.pool_values(
        POOLS[0], r._values(OUTPUTS), tree=tree, render=r._render_clm)["UserData"])).decode() \
        == master_user_data

