"""Rendering one cluster: what comes out, in which order, and that a broken template stops
everything."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from clmgit_sandbox.doubles import StaticConfigSource

from clmgit.config.deletions import Deletion
from clmgit.config.output import render_text
from clmgit.config.render import cluster_renderer, render_cluster
from clmgit.config.source import GitConfigSource
from clmgit.config.values import STACK_OUTPUTS, placeholder_values
from clmgit.errors import ConfigError, TemplateError
from clmgit.model import NodePool
from tests.helpers.configrepo import ConfigRepo, cluster


def test_everything_a_cluster_gets(config_repo: ConfigRepo, base_files: dict[str, str]) -> None:
    sha = config_repo.commit(base_files)
    r = render_cluster(config_repo.source, sha, cluster())
    assert r.sha == sha
    assert [(s.name, s.path) for s in r.stacks] == [
        ("kube-1", "cluster/stack.yaml"),
        ("10-etcd-kube-1", "cluster/cf-manifests/10-etcd.yaml"),
        ("20-dns-kube-1", "cluster/cf-manifests/20-dns.yaml"),
    ]
    assert r.stacks[0].text.startswith("Description: main stack of aws:123456789012:eu-cent")
    assert r.stacks[2].text == "Description: dns in <stack output VpcId>\n"
    (pool,) = r.node_pool_stacks
    assert (pool.name, pool.node_pool) == ("nodepool-default-kube-1", "default")
    assert pool.text == "Description: pool default (standard)\nMinSize: 2\n"
    assert r.deletions.pre_apply == (Deletion("Deployment", "kube-system", "legacy-kube-1"),)
    assert r.deletions.post_apply == (Deletion("Pod", labels={"application": "old"},
                                               has_owner=False),)
    assert r.cf_deletions.post_apply == (Deletion("Stack", name="old-stack-kube-1"),)


def test_components_files_and_documents_come_in_order(config_repo: ConfigRepo,
                                                       base_files: dict[str, str]) -> None:
    base_files.update({
        "cluster/manifests/c-more/2.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: two}\n",
        "cluster/manifests/c-more/10.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: ten}\n",
        "cluster/manifests/c-more/empty.yaml": "{% if false %}x: 1{% endif %}\n\n",
        "cluster/manifests/c-more/README.md": "not a manifest\n",
        "cluster/manifests/c-more/sub/deep.yaml": "not applied: 1\n",
    })
    sha = config_repo.commit(base_files)
    r = render_cluster(config_repo.source, sha, cluster())
    assert [c.name for c in r.manifests] == ["a-rbac", "b-app", "c-more"]
    listing = [(o.path.removeprefix("cluster/manifests/"), o.index, o.kind, o.name)
               for c in r.manifests for o in c.objects]
    assert listing == [
        ("a-rbac/rbac.yaml", 0, "ServiceAccount", "robot"),
        ("a-rbac/rbac.yaml", 1, "ClusterRole", "robot"),
        ("b-app/config.yaml", 0, "ConfigMap", "app-config"),
        ("b-app/deployment.yaml", 0, "Deployment", "app"),
        ("c-more/10.yaml", 0, "Secret", "ten"),
        ("c-more/2.yaml", 0, "Secret", "two"),
    ]


def test_objects_are_parsed_with_defaults_merged_and_hashes_of_siblings(
        config_repo: ConfigRepo, base_files: dict[str, str]) -> None:
    sha = config_repo.commit(base_files)
    r = render_cluster(config_repo.source, sha, cluster(environment="production"))
    config, deployment = r.manifests[1].objects
    assert config.obj["data"] == {"tier": "critical"}
    assert deployment.obj["spec"] == {"replicas": 3}  # the registry's 3 wins over the default 2
    rendered_config = config_repo.source.files(sha)["cluster/manifests/b-app/config.yaml"]
    expected = hashlib.sha256(rendered_config.decode().replace(
        "{{ cluster.config_items.tier }}", "critical").encode()).hexdigest()
    assert deployment.obj["metadata"]["annotations"]["config-hash"] == expected
    assert r.cluster.config_items["tier"] == "critical"
    assert r.cluster.node_pools[0].config_items["tier"] == "critical"


def test_rendering_is_deterministic(config_repo: ConfigRepo, base_files: dict[str, str]) -> None:
    base_files["cluster/manifests/b-app/more.yaml"] = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\n"
        "data:\n  all: '{{ cluster.config_items | to_json }}'\n"
        "  zones: '{{ values.subnets | to_json }}'\n"
    )
    sha = config_repo.commit(base_files)
    record = cluster(config_items={"z": "1", "a": "2", "m": "3"})
    first = render_text(render_cluster(config_repo.source, sha, record), mask=False)
    fresh_source = GitConfigSource(config_repo.source.repo)
    second = render_text(render_cluster(fresh_source, sha, record), mask=False)
    assert first.encode() == second.encode()
    assert '"a": "2", "db_password"' in first  # sorted keys, not insertion order


@pytest.mark.parametrize(("path", "source", "error"), [
    ("cluster/manifests/b-app/config.yaml", "a: 1\nb: {{ nope }}\n",
     "cluster/manifests/b-app/config.yaml:2: 'nope' is undefined"),
    ("cluster/cf-manifests/20-dns.yaml", "\n\n{% if %}", "cluster/cf-manifests/20-dns.yaml:3: "),
    ("cluster/node-pools/worker-default/stack.yaml", "x: {{ ''.__class__ }}",
     "cluster/node-pools/worker-default/stack.yaml:1: access to attribute '__class__'"),
    ("cluster/manifests/deletions.yaml", "pre_apply:\n- {{ node_pool.name }}",
     "cluster/manifests/deletions.yaml:2: 'node_pool' is undefined"),
])
def test_a_broken_template_anywhere_fails_the_whole_render(
        config_repo: ConfigRepo, base_files: dict[str, str], path: str, source: str,
        error: str) -> None:
    base_files[path] = source
    sha = config_repo.commit(base_files)
    with pytest.raises(TemplateError) as info:
        render_cluster(config_repo.source, sha, cluster())
    assert str(info.value).startswith(error)


@pytest.mark.parametrize(("text", "error"), [
    ("a: [1\n", "b-app/config.yaml:2: the rendered YAML is malformed"),
    ("- 1\n", "b-app/config.yaml: object 1 is not a Kubernetes object"),
    ("apiVersion: v1\nkind: ConfigMap\n", "object 1 \\(ConfigMap\\) needs metadata.name"),
    ("kind: ConfigMap\nmetadata: {name: x}\n", "object 1 needs apiVersion and kind"),
])
def test_rendered_manifests_must_be_kubernetes_objects(
        config_repo: ConfigRepo, base_files: dict[str, str], text: str, error: str) -> None:
    base_files["cluster/manifests/b-app/config.yaml"] = text
    sha = config_repo.commit(base_files)
    with pytest.raises(ConfigError, match=error):
        render_cluster(config_repo.source, sha, cluster())


@pytest.mark.parametrize("path", ["cluster/cf-manifests/20-dns.yaml",
                                  "cluster/node-pools/worker-default/stack.yaml"])
def test_rendered_stacks_must_be_yaml(config_repo: ConfigRepo, base_files: dict[str, str],
                                      path: str) -> None:
    base_files[path] = "Resources:\n  A: !Ref B\n  C: [\n"
    sha = config_repo.commit(base_files)
    with pytest.raises(ConfigError, match=f"^{path}:4: the rendered YAML is malformed"):
        render_cluster(config_repo.source, sha, cluster())
    base_files[path] = "Resources:\n  A: !Ref B\n  C: !GetAtt D.Arn\n"
    fixed = config_repo.commit(base_files)
    assert render_cluster(config_repo.source, fixed, cluster()).stacks[0].text


def test_a_node_pool_with_an_unknown_profile(config_repo: ConfigRepo,
                                             base_files: dict[str, str]) -> None:
    sha = config_repo.commit(base_files)
    record = cluster(node_pools=(NodePool(name="gpu", profile="worker-gpu"),))
    with pytest.raises(ConfigError, match="node pool gpu has profile 'worker-gpu', but "
                                          "cluster/node-pools/worker-gpu/stack.yaml is missing"):
        render_cluster(config_repo.source, sha, record)


def test_the_main_stack_is_required() -> None:
    source = StaticConfigSource({"s": {"cluster/manifests/x/a.yaml": ""}})
    with pytest.raises(ConfigError, match="cluster/stack.yaml is missing at s"):
        render_cluster(source, "s", cluster(node_pools=()))


def test_stacks_render_one_by_one_with_the_outputs_of_earlier_stacks(
        config_repo: ConfigRepo, base_files: dict[str, str]) -> None:
    sha = config_repo.commit(base_files)
    renderer = cluster_renderer(config_repo.source, sha, cluster())
    values = placeholder_values(renderer.cluster)
    main, etcd, dns = renderer.stack_paths()
    assert renderer.render_stack(dns, values).text == "Description: dns in <stack output VpcId>\n"
    values = {**values, STACK_OUTPUTS: {"VpcId": "vpc-123"}}
    assert renderer.render_stack(dns, values).text == "Description: dns in vpc-123\n"
    values = {**values, STACK_OUTPUTS: {"VpcId": "vpc-123", "Other": "x"}}
    assert renderer.render_stack(dns, values).text == "Description: dns in vpc-123\n"


def test_values_without_stack_outputs_get_placeholder_outputs(
        config_repo: ConfigRepo, base_files: dict[str, str]) -> None:
    sha = config_repo.commit(base_files)
    r = render_cluster(config_repo.source, sha, cluster(), values={"anything": 1})
    assert r.stacks[2].text == "Description: dns in <stack output VpcId>\n"


def test_placeholder_values_come_from_the_record() -> None:
    values = placeholder_values(cluster(region="eu-west-1",
                                        api_server_url="https://kube-9.teapot.example.org"))
    assert values["availability_zones"] == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    assert values["subnets"]["*"].count(",") == 2
    assert values["hosted_zone"] == "teapot.example.org"


def test_clusters_render_concurrently_as_they_do_one_by_one(config_repo: ConfigRepo,
                                                            base_files: dict[str, str]) -> None:
    sha = config_repo.commit(base_files)
    records = [cluster(id=f"c{i}", local_id=f"kube-{i}", config_items={"replicas": str(i)})
               for i in range(6)]
    alone = [render_text(render_cluster(config_repo.source, sha, r)) for r in records]
    shared = GitConfigSource(config_repo.source.repo)
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(lambda r: render_text(render_cluster(shared, sha, r)), records))
    assert together == alone
    assert len(set(alone)) == 6
