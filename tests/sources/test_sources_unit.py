"""Config sources without the cloud: the declaration in `clmgit.yaml`, CLM's version string
(against CLM's measured hash vectors), `override_channel`, and the composition of two trees."""

from __future__ import annotations

import pytest
from clmgit_sandbox.configrepo import cluster_record
from clmgit_sandbox.doubles import StaticConfigSource

from clmgit.config.composed import ComposedRenderer
from clmgit.errors import ConfigError
from clmgit.layout import DEFAULT, MAIN, Source, Sources, load_settings, parse_sources
from clmgit.model import (
    channel_overrides,
    config_version,
    desired_version,
    parse_cluster,
    split_config_version,
)
from tests.helpers.data import data_json

A, B = "a" * 40, "b" * 40
TWO = Sources((Source(MAIN), Source("addons", "/x")), declared=True)
VECTORS = data_json("clm-hash-vectors.json")["vectors"]


def _parse(text: str) -> Sources:
    return parse_sources(load_settings(text.encode()), "clmgit.yaml")


def test_no_sources_key_is_this_repository_alone() -> None:
    sources = _parse("layout: clm\n")
    assert (sources.names, sources.declared, sources.several) == ((MAIN,), False, False)


def test_sources_are_ordered_with_the_main_source_first() -> None:
    sources = _parse("sources:\n  - name: base\n  - name: addons\n    repo: ../addons\n"
                     "    branches: {beta: addons-beta}\nallow_override: [stack/x]\n")
    assert sources.names == ("base", "addons")
    assert sources.main.repo is None and sources.get("addons").branches == {
        "beta": "addons-beta"}
    assert sources.allow_override == {"stack/x"}


@pytest.mark.parametrize(("text", "message"), [
    ("sources: []\n", "key 'sources' must be a non-empty list"),
    ("sources:\n  - name: Main\n", "source #1 needs a name of [a-z0-9-]+, not 'Main'"),
    ("sources:\n  - name: a\n  - name: a\n    repo: x\n", "source 'a' is listed twice"),
    ("sources:\n  - name: a\n  - name: b\n", "only one source may leave out 'repo'"),
    ("sources:\n  - name: a\n    repo: x\n", "a single source is this repository"),
    ("sources:\n  - name: a\n    rep: x\n", "source #1 has unknown key 'rep'"),
    ("allow_override: stack/x\n", "key 'allow_override' must be a list"),
])
def test_a_bad_declaration_is_one_sentence(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=None) as e:
        _parse(text)
    assert message in str(e.value)
    assert str(e.value).startswith("clmgit.yaml: ")


@pytest.mark.parametrize("vector", VECTORS[:5], ids=lambda v: v["name"])
def test_the_version_string_is_clms(vector) -> None:
    cluster = parse_cluster(vector["record"], "vector")
    clm_hash = vector["clm_version"].partition("#")[2]

    several = desired_version(config_version([(MAIN, A), ("addons", B)]), cluster)
    one = desired_version(config_version([(MAIN, A)]), cluster)

    # CLM's combinedVersion.ID(): name=sha joined by ';' in source order; one source: its SHA.
    assert several == f"main={A};addons={B}#{clm_hash}"
    assert one == f"{A}#{clm_hash}"
    assert split_config_version(several.partition("#")[0], TWO.names) == {MAIN: A, "addons": B}


@pytest.mark.parametrize(("value", "expected"), [
    ("addons=feature", {"addons": "feature"}),
    (f"main={A},addons=beta", {MAIN: A, "addons": "beta"}),
])
def test_override_channel_points_sources_elsewhere(value: str, expected) -> None:
    cluster = parse_cluster(cluster_record("c", channel="dev",
                                           config_items={"override_channel": value}), "r")
    assert channel_overrides(cluster, TWO.names) == expected


@pytest.mark.parametrize(("value", "message"), [
    (" addons=beta", "' addons' is not a config source"),
    ("extras=beta", "'extras' is not a config source"),
    ("addons=", "source 'addons' has an empty revision"),
    ("addons", "'addons' is not source=revision"),
    ("addons=a,addons=b", "source 'addons' is named twice"),
])
def test_a_bad_override_names_the_cluster(value: str, message: str) -> None:
    cluster = parse_cluster(cluster_record("aws:1:r:k1", channel="dev", alias="k1",
                                           config_items={"override_channel": value}), "r")
    with pytest.raises(ConfigError) as e:
        channel_overrides(cluster, TWO.names)
    assert str(e.value).startswith("cluster k1: config item override_channel: ")
    assert message in str(e.value)


def _cm(name: str, namespace: str = "platform") -> str:
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: "
            f"{namespace}}}\ndata: {{level: \"{{{{ cluster.config_items.level }}}}\"}}\n")


MAIN_TREE = {
    "cluster/stack.yaml": "Resources: {}\n",
    "cluster/node-pools/worker-default/stack.yaml": "Resources: {}\n",
    "cluster/config-defaults.yaml": "level: info\nonly_main: m\n",
    "cluster/cf-manifests/logs.yaml": "Resources: {}\n",
    "cluster/manifests/app/a.yaml": _cm("a"),
    "cluster/manifests/deletions.yaml": "pre_apply: [{kind: ConfigMap, namespace: p, "
                                        "name: m-pre}]\npost_apply: [{kind: ConfigMap, "
                                        "namespace: p, name: m-post}]\n",
}
ADDONS_TREE = {
    "cluster/stack.yaml": "not: read\n",  # the main stack comes from the main source only
    "cluster/config-defaults.yaml": "level: debug\n",
    "cluster/cf-manifests/queue.yaml": "Resources: {}\n",
    "cluster/manifests/app/b.yaml": _cm("b"),
    "cluster/manifests/deletions.yaml": "pre_apply: [{kind: ConfigMap, namespace: p, "
                                        "name: a-pre}]\n",
}


def _composed(main: dict[str, str], addons: dict[str, str], *, items=None,
              allow=()) -> ComposedRenderer:
    source = StaticConfigSource({A: main, B: addons})
    record = cluster_record("aws:1:eu-central-1:k1", channel="dev", alias="k1",
                            config_items=items or {})
    return ComposedRenderer([(MAIN, source.files(A)), ("addons", source.files(B))],
                            f"main={A};addons={B}", parse_cluster(record, "r"), DEFAULT,
                            account=None, allow_override=allow)


def test_composition_follows_clm() -> None:
    rendered = _composed(MAIN_TREE, ADDONS_TREE).render_all()

    assert rendered.sha == f"main={A};addons={B}"
    assert [s.name for s in rendered.stacks] == ["k1", "logs-k1", "queue-k1"]
    assert [c.name for c in rendered.manifests] == ["main/app", "addons/app"]
    # Defaults: each source rendered alone, the later source winning key by key.
    assert rendered.cluster.config_items["level"] == "debug"
    assert rendered.cluster.config_items["only_main"] == "m"
    assert rendered.manifests[0].objects[0].obj["data"] == {"level": "debug"}
    assert [d.name for d in rendered.deletions.pre_apply] == ["m-pre", "a-pre"]
    assert [d.name for d in rendered.deletions.post_apply] == ["m-post"]


def test_the_registry_wins_over_every_source() -> None:
    rendered = _composed(MAIN_TREE, ADDONS_TREE, items={"level": "warn"}).render_all()
    assert rendered.manifests[1].objects[0].obj["data"] == {"level": "warn"}


def test_an_object_of_two_sources_is_refused_unless_allowed() -> None:
    addons = {**ADDONS_TREE, "cluster/manifests/app/b.yaml": _cm("a")}

    with pytest.raises(ConfigError) as e:
        _composed(MAIN_TREE, addons).render_all()
    allowed = _composed(MAIN_TREE, addons, allow=["ConfigMap/platform/a"]).render_all()

    assert str(e.value).startswith("config sources 'main' and 'addons' both define "
                                   "ConfigMap/platform/a;")
    assert [len(c.objects) for c in allowed.manifests] == [1, 1]


def test_a_stack_of_two_sources_is_refused_unless_allowed() -> None:
    addons = {**ADDONS_TREE, "cluster/cf-manifests/logs.yaml": "Resources: {}\n"}

    with pytest.raises(ConfigError) as e:
        _composed(MAIN_TREE, addons).render_all()
    allowed = _composed(MAIN_TREE, addons, allow=["stack/logs-k1"]).render_all()

    assert "both define stack/logs-k1" in str(e.value)
    assert [s.name for s in allowed.stacks] == ["k1", "logs-k1", "logs-k1", "queue-k1"]


CLM_MAIN = {
    "cluster/cluster.yaml": "Resources: {}\n",
    "cluster/etcd/stack.yaml": "Resources: {}\n",
    "cluster/node-pools/worker-default/stack.yaml": "Resources: {}\n",
    "cluster/cf-manifests/a.yaml": "Metadata: {StackName: main-extra}\nResources: {}\n",
    "cluster/cf-manifests/cf-deletions.yaml": "pre_apply:\n  - stackName: old-main\n",
}
CLM_ADDONS = {
    "cluster/cluster.yaml": "never: read\n",
    "cluster/etcd/stack.yaml": "never: read\n",
    "cluster/cf-manifests/a.yaml": "Metadata: {StackName: addon-extra}\nResources: {}\n",
    "cluster/cf-manifests/cf-deletions.yaml": "pre_apply:\n  - stackName: old-addon\n",
}


def test_composition_in_clms_layout() -> None:
    from clmgit.layout import CLM_LAYOUT

    source = StaticConfigSource({A: CLM_MAIN, B: CLM_ADDONS})
    record = cluster_record("aws:1:eu-central-1:k1", channel="dev", alias="k1")
    renderer = ComposedRenderer([(MAIN, source.files(A)), ("addons", source.files(B))],
                                f"main={A};addons={B}", parse_cluster(record, "r"), CLM_LAYOUT,
                                account=None)

    rendered = renderer.render_all()

    assert [(s.name, s.path) for s in rendered.stacks] == [
        ("etcd-cluster-etcd", "cluster/etcd/stack.yaml"), ("k1", "cluster/cluster.yaml"),
        ("main-extra", "cluster/cf-manifests/a.yaml"),
        ("addon-extra", "addons:cluster/cf-manifests/a.yaml")]
    assert [d.name for d in rendered.cf_deletions.pre_apply] == ["old-main", "old-addon"]
    assert [s.name for s in rendered.node_pool_stacks] == [
        "nodepool-default-worker-aws-1-eu-central-1-k1"]
