"""The repository setting `clmgit.yaml` (layout): parsed strictly, read from the control branch,
and used by `render` and `diff` (reconcile's use is in tests/reconcile/test_clm_layout_e2e.py)."""

from __future__ import annotations

import pytest
from clmgit_sandbox.configrepo import cluster_record

from clmgit.errors import ConfigError
from clmgit.layout import CLM, CLMGIT, DEFAULT, Layout, parse_settings
from tests.helpers.cli import run_cli
from tests.helpers.clm_layout import SMALL_TREE as CLM_TREE
from tests.helpers.clm_layout import clm_repo


@pytest.mark.parametrize(("text", "layout"), [
    (None, DEFAULT),
    (b"", DEFAULT),
    (b"# nothing set\n", DEFAULT),
    (b"layout: clmgit\n", Layout(CLMGIT)),
    (b"layout: clm\n", Layout(CLM)),
    (b"layout: clm\nmanage_etcd_stack: false\n", Layout(CLM, manage_etcd_stack=False)),
])
def test_the_setting_selects_a_layout(text: bytes | None, layout: Layout) -> None:
    assert parse_settings(text) == layout


@pytest.mark.parametrize(("text", "message"), [
    (b"layout: CLM\n", "clmgit.yaml: key 'layout' must be one of clmgit, clm, not 'CLM'"),
    (b"layout: 1\n", "clmgit.yaml: key 'layout' must be one of clmgit, clm, not 1"),
    (b"manage_etcd_stack: yes please\n",
     "clmgit.yaml: key 'manage_etcd_stack' must be true or false, not 'yes please'"),
    (b"layot: clm\n",
     "clmgit.yaml: unknown key 'layot' (known keys: layout, manage_etcd_stack, health_checks, "
     "aws, notify, signing)"),
    (b"- clm\n", "clmgit.yaml must be a mapping of settings"),
    (b"layout: [\n", "clmgit.yaml is not valid YAML (line 2)"),
])
def test_a_malformed_setting_is_one_sentence_naming_file_and_key(text: bytes,
                                                                  message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_settings(text)
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


def test_render_follows_the_repositorys_layout(tmp_path) -> None:
    builder = clm_repo(tmp_path)
    out = tmp_path / "out"

    dev = builder.git("rev-parse", "dev").strip()
    result = run_cli("--repo", str(builder.path), "render", "--cluster", "kube-1", "--sha", dev,
                     "--out", str(out))

    assert result.code == 0, result.err
    rendered = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    stacks = [p for p in rendered if p.startswith("stacks/")]
    assert any("etcd-cluster-etcd" in p for p in stacks), rendered
    assert any("x-kube-1" in p for p in stacks), rendered
    assert not any("cluster-kube-1" in p for p in stacks), rendered  # the main stack: kube-1
    assert any("nodepool-default-worker-aws-123456789012-eu-central-1-kube-1" in p
               for p in rendered), rendered


def test_without_the_setting_a_clm_tree_is_not_read_as_clms(tmp_path) -> None:
    builder = clm_repo(tmp_path, setting=None)
    dev = builder.git("rev-parse", "dev").strip()
    result = run_cli("--repo", str(builder.path), "render", "--cluster", "kube-1", "--sha", dev)
    assert result.code == 1
    assert "cluster/stack.yaml is missing" in result.err


def test_diff_renders_in_the_repositorys_layout(tmp_path) -> None:
    builder = clm_repo(tmp_path)
    changed = dict(CLM_TREE, **{"cluster/etcd/stack.yaml": CLM_TREE["cluster/etcd/stack.yaml"]
                                + "    Properties: {VisibilityTimeout: 60}\n"})
    builder.commit("dev", changed, "etcd change")

    result = run_cli("--repo", str(builder.path), "diff", "dev", "alpha")

    assert result.code == 0, result.err
    assert "VisibilityTimeout: 60" in result.out
    assert "failed" not in result.out


def test_a_cf_manifest_that_renders_empty_is_no_stack_in_render(tmp_path) -> None:
    from clmgit_sandbox.doubles import StaticConfigSource

    from clmgit.config.render import render_cluster
    from clmgit.layout import CLM_LAYOUT
    from clmgit.model import parse_cluster

    tree = dict(CLM_TREE, **{"cluster/cf-manifests/y.yaml": "{% if false %}x: 1{% endif %}\n"})
    record = cluster_record("aws:123456789012:eu-central-1:kube-1", channel="dev")
    rendered = render_cluster(StaticConfigSource({"s": tree}), "s",
                              parse_cluster(record, "record"), layout=CLM_LAYOUT)
    assert [s.name for s in rendered.stacks] == ["etcd-cluster-etcd", "kube-1", "x-kube-1"]
