"""kubernetes-on-aws (../shared/corpus), converted by `clmgit.convert`, rendered with CLM's
function library for sample clusters of three environments."""

from __future__ import annotations

import pytest
import yaml

from clmgit.config.computed import ClmSession
from clmgit.config.defaults import with_defaults
from clmgit.convert.clmdata import SAMPLE_ENVIRONMENTS as ENVIRONMENTS
from tests.helpers.corpus import (
    OUTPUTS,
    REGISTRY_ITEMS,
    CorpusEc2,
    CorpusRenderer,
    corpus_files,
    sample,
)


@pytest.fixture(scope="module")
def renderer(tmp_path_factory: pytest.TempPathFactory) -> CorpusRenderer:
    return CorpusRenderer(corpus_files(tmp_path_factory.mktemp("corpus")), CorpusEc2())


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


def session(renderer: CorpusRenderer, environment: str) -> ClmSession:
    """The project's computed values for a sample cluster of `environment`."""
    defaults = renderer.defaults(sample(environment))
    return ClmSession(with_defaults(sample(environment, REGISTRY_ITEMS), defaults), renderer.ec2)


def rendered_manifests(renderer: CorpusRenderer, environment: str) -> dict[str, str]:
    clm = session(renderer, environment)
    root = {"Cluster": clm.cluster_data(), "NodePool": None,
            "Values": clm.values(OUTPUTS, tree=renderer.templates, render=renderer.render)}
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


def rendered_stacks(renderer: CorpusRenderer, environment: str) -> dict[str, str]:
    """The main stack, the etcd stack, and every node pool's files (named `path@pool`), with the
    values the project computes (user data and generated files' paths included)."""
    clm = session(renderer, environment)
    values = clm.values(OUTPUTS, tree=renderer.templates, render=renderer.render)
    root = {"Cluster": clm.cluster_data(), "Values": values, "NodePool": None}
    out = {p: renderer.render(p, root) for p in ("cluster/cluster.yaml", "cluster/etcd/stack.yaml")}
    out["cluster/etcd/files.yaml"] = clm.rendered["cluster/etcd/files.yaml", None]
    for pool in clm.cluster.node_pools:
        pool_root = {"Cluster": root["Cluster"], "NodePool": clm.pool_data(pool),
                     "Values": clm.pool_values(pool, OUTPUTS, tree=renderer.templates,
                                               render=renderer.render)}
        prefix = f"cluster/node-pools/{pool.profile}/"
        for path in sorted(p for p in renderer.templates if p.startswith(prefix)):
            # files.yaml and userdata.yaml were rendered to compute the pool's values
            known = clm.rendered.get((path, pool.name))
            out[f"{path}@{pool.name}"] = (renderer.render(path, pool_root) if known is None
                                          else known)
    return out


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_stacks_and_node_pools_render(renderer: CorpusRenderer, environment: str) -> None:
    stacks = rendered_stacks(renderer, environment)
    assert len(stacks) == 3 + 3 * 3 + 3  # main, etcd; 3 pools of 3 files; Karpenter's 3
    for path, text in stacks.items():
        if path.split("@")[0].endswith("stack.yaml") or path == "cluster/cluster.yaml":
            template = yaml.load(text, Loader=_CfnLoader)
            assert template["Resources"], path


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short tags (`!Ref`, `!GetAtt`, ...) read as plain values."""


_CfnLoader.add_multi_constructor("!", lambda loader, suffix, node: (
    loader.construct_scalar(node) if isinstance(node, yaml.ScalarNode)
    else loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode)
    else loader.construct_mapping(node)))


# kubernetes-on-aws writes `Tags` on AWS::EC2::SecurityGroupIngress, which cfn-lint's schema
# does not allow: literal text of the corpus, rendered by CLM the same way, not a rendering fault.
_CORPUS_FINDINGS = {("E3002", "'Tags' was unexpected")}


@pytest.mark.slow
def test_rendered_cloudformation_passes_cfn_lint(renderer: CorpusRenderer) -> None:
    from cfnlint.api import ManualArgs, lint  # slow to import; only this test needs it

    stacks = rendered_stacks(renderer, "production")
    errors = []
    for path, text in stacks.items():
        if not (path.split("@")[0].endswith("stack.yaml") or path == "cluster/cluster.yaml"):
            continue
        for match in lint(text, config=ManualArgs(regions=["eu-central-1"])):
            if match.rule.id.startswith("E") and not any(
                    match.rule.id == rule and text_ in match.message
                    for rule, text_ in _CORPUS_FINDINGS):
                errors.append(f"{path}:{match.linenumber}: {match.rule.id} {match.message}")
    assert errors == []
