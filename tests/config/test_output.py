from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from clmgit.config.output import MARKER, render_text, render_to_files, rendered_files
from clmgit.config.render import RenderedCluster, render_cluster
from clmgit.errors import ConfigError
from tests.helpers.configrepo import ConfigRepo, cluster

SECRET = "s3cr3t-value"


@pytest.fixture
def rendered(config_repo: ConfigRepo, base_files: dict[str, str]) -> RenderedCluster:
    base_files["cluster/manifests/b-app/secret.yaml"] = (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: default}\n"
        "data:\n  token: {{ cluster.config_items.api_token | base64 }}\n"
        "stringData:\n  conf: |\n    user=robot\n    token={{ cluster.config_items.api_token }}\n"
        "    db={{ cluster.config_items.db_password }}\n"
    )
    sha = config_repo.commit(base_files)
    return render_cluster(config_repo.source, sha, cluster(config_items={"api_token": SECRET}))


def test_one_file_per_object_in_apply_order(rendered: RenderedCluster) -> None:
    assert [f.path for f in rendered_files(rendered)] == [
        "stacks/kube-1.yaml",
        "stacks/10-etcd-kube-1.yaml",
        "stacks/20-dns-kube-1.yaml",
        "node-pools/nodepool-default-kube-1.yaml",
        "deletions/kubernetes.yaml",
        "deletions/cloudformation.yaml",
        "manifests/a-rbac/serviceaccount_kube-system_robot.yaml",
        "manifests/a-rbac/clusterrole_robot.yaml",
        "manifests/b-app/configmap_default_app-config.yaml",
        "manifests/b-app/deployment_default_app.yaml",
        "manifests/b-app/secret_default_creds.yaml",
    ]


def test_objects_are_written_as_yaml_that_reads_back(rendered: RenderedCluster) -> None:
    files = {f.path: f.text for f in rendered_files(rendered, mask=False)}
    secret = files["manifests/b-app/secret_default_creds.yaml"]
    assert "  conf: |\n    user=robot\n" in secret  # multi-line strings as literal blocks
    assert yaml.safe_load(secret) == rendered.manifests[1].objects[2].obj
    assert yaml.safe_load(files["deletions/cloudformation.yaml"]) == {
        "pre_apply": [], "post_apply": [{"kind": "Stack", "name": "old-stack-kube-1"}]}


def test_secret_values_are_masked_unless_asked(rendered: RenderedCluster) -> None:
    encoded = base64.b64encode(SECRET.encode()).decode()
    masked = render_text(rendered)
    assert SECRET not in masked and encoded not in masked
    assert "  token: ***\n" in masked and "    token=***\n" in masked
    assert "default-password" not in masked  # a default's secret-looking value is masked too
    plain = render_text(rendered, mask=False)
    assert SECRET in plain and encoded in plain and "default-password" in plain


def test_text_form_heads_each_file_with_its_path(rendered: RenderedCluster) -> None:
    text = render_text(rendered)
    assert text.startswith("---\n# Source: stacks/kube-1.yaml\nDescription: main stack")
    assert text.count("\n---\n# Source: ") == len(rendered_files(rendered)) - 1
    plain = render_text(rendered, mask=False)  # masked text does not parse, on purpose
    assert len(list(yaml.safe_load_all(plain))) == len(rendered_files(rendered))


def test_the_same_object_twice_keeps_both_files(config_repo: ConfigRepo,
                                                base_files: dict[str, str]) -> None:
    base_files["cluster/manifests/b-app/again.yaml"] = base_files[
        "cluster/manifests/b-app/config.yaml"]
    sha = config_repo.commit(base_files)
    paths = [f.path for f in rendered_files(render_cluster(config_repo.source, sha, cluster()))]
    assert "manifests/b-app/configmap_default_app-config.yaml" in paths
    assert "manifests/b-app/configmap_default_app-config-2.yaml" in paths


def test_render_to_files_writes_the_layout(rendered: RenderedCluster, tmp_path: Path) -> None:
    out = tmp_path / "out" / "kube-1"
    written = render_to_files(rendered, out)
    assert written == [f.path for f in rendered_files(rendered)]
    assert (out / "stacks/kube-1.yaml").read_text() == rendered.stacks[0].text
    assert SECRET not in (out / "manifests/b-app/secret_default_creds.yaml").read_text()
    assert (out / MARKER).read_text() == f"{rendered.cluster.id} {rendered.sha}\n"
    assert sorted(p.name for p in tmp_path.joinpath("out").iterdir()) == ["kube-1"]


def test_a_new_render_replaces_an_old_one(rendered: RenderedCluster, tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to_files(rendered, out)
    (out / "manifests" / "stale.yaml").write_text("from an older render\n")
    render_to_files(rendered, out)
    assert not (out / "manifests" / "stale.yaml").exists()
    assert (out / "stacks/kube-1.yaml").exists()


def test_a_directory_with_other_files_is_refused_and_left_alone(rendered: RenderedCluster,
                                                                tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "precious.txt").write_text("keep me\n")
    with pytest.raises(ConfigError, match="is not empty and holds no earlier render"):
        render_to_files(rendered, mine)
    assert [p.name for p in mine.iterdir()] == ["precious.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config", "mine"]
    file = mine / "precious.txt"
    with pytest.raises(ConfigError, match="is a file"):
        render_to_files(rendered, file)
