from __future__ import annotations

import base64

import pytest

from clmgit.config.diff import ClusterDiff, FileDiff, rendered_diff
from clmgit.config.offline import preview_account
from clmgit.config.render import render_cluster
from clmgit.errors import TemplateError
from clmgit.layout import CLM_LAYOUT
from tests.helpers.configrepo import ConfigRepo, cluster

CONFIG = "cluster/manifests/b-app/config.yaml"


def test_a_changed_manifest_shows_as_a_unified_diff(config_repo: ConfigRepo,
                                                    base_files: dict[str, str]) -> None:
    old = config_repo.commit(base_files)
    new = config_repo.commit({CONFIG: base_files[CONFIG] + "  extra: added\n"})
    diff = rendered_diff(config_repo.source, cluster(), old_sha=old, new_sha=new, label="canary")
    paths = [(f.path, f.status) for f in diff.files]
    # The config map changed, and so did the hash of it in the deployment.
    assert paths == [("manifests/b-app/configmap_default_app-config.yaml", "changed"),
                     ("manifests/b-app/deployment_default_app.yaml", "changed")]
    config_diff = diff.files[0].text
    assert config_diff.startswith("--- a/manifests/b-app/configmap_default_app-config.yaml\n"
                                  "+++ b/manifests/b-app/configmap_default_app-config.yaml\n@@")
    assert "\n+  extra: added\n" in config_diff
    assert "  tier: standard\n" in config_diff  # context lines
    text = diff.text()
    assert text.startswith(f"# canary: cluster {cluster().id}, {old[:7]} → {new[:7]}\n")


def test_no_change_in_rendered_files_is_no_diff(config_repo: ConfigRepo,
                                                base_files: dict[str, str]) -> None:
    old = config_repo.commit(base_files)
    new = config_repo.commit({"README.md": "docs\n",
                              "cluster/manifests/b-app/deployment.yaml":
                                  "{# a comment #}" + base_files[
                                      "cluster/manifests/b-app/deployment.yaml"]})
    diff = rendered_diff(config_repo.source, cluster(), old_sha=old, new_sha=new)
    assert not diff.changed
    assert "no change to the rendered stacks and manifests" in diff.text()
    assert not rendered_diff(config_repo.source, cluster(), old_sha=new, new_sha=new).changed


def test_added_and_removed_objects_and_stacks(config_repo: ConfigRepo,
                                              base_files: dict[str, str]) -> None:
    old = config_repo.commit(base_files)
    new = config_repo.commit({
        "cluster/cf-manifests/10-etcd.yaml": None,
        "cluster/manifests/c-new/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
    })
    diff = rendered_diff(config_repo.source, cluster(), old_sha=old, new_sha=new)
    assert [(f.path, f.status) for f in diff.files] == [
        ("manifests/c-new/namespace_x.yaml", "added"),
        ("stacks/10-etcd-kube-1.yaml", "removed"),
    ]
    assert diff.files[0].text.startswith("--- /dev/null\n+++ b/manifests/c-new/namespace_x.yaml")
    assert diff.files[1].text.startswith("--- a/stacks/10-etcd-kube-1.yaml\n+++ /dev/null")


def test_moving_an_object_between_files_is_no_change(config_repo: ConfigRepo,
                                                     base_files: dict[str, str]) -> None:
    old = config_repo.commit(base_files)
    rbac = "cluster/manifests/a-rbac/rbac.yaml"
    first, second = base_files[rbac].split("---\n# an empty document\n---\n")
    new = config_repo.commit({rbac: second, "cluster/manifests/a-rbac/0-sa.yaml": first})
    assert not rendered_diff(config_repo.source, cluster(), old_sha=old, new_sha=new).changed


def test_secret_values_are_masked_but_their_change_is_visible(config_repo: ConfigRepo,
                                                              base_files: dict[str, str]) -> None:
    base_files[CONFIG] += ("  password: {{ cluster.config_items.db_password }}\n"
                           "  encoded: {{ cluster.config_items.db_password | base64 }}\n")
    old = config_repo.commit(base_files)
    new = config_repo.commit({"cluster/config-defaults.yaml": base_files[
        "cluster/config-defaults.yaml"].replace("default-password", "rotated-password")})
    diff = rendered_diff(config_repo.source, cluster(), old_sha=old, new_sha=new)
    text = diff.text()
    for secret in ("default-password", "rotated-password"):
        assert secret not in text
        assert base64.b64encode(secret.encode()).decode() not in text
    assert ("-  password: ***\n-  encoded: ***\n"
            "+  password: ***\n+  encoded: ***\n") in text


def test_a_first_pin_shows_everything_as_added(config_repo: ConfigRepo,
                                               base_files: dict[str, str]) -> None:
    new = config_repo.commit(base_files)
    diff = rendered_diff(config_repo.source, cluster(), old_sha=None, new_sha=new)
    assert diff.files and all(f.status == "added" for f in diff.files)
    assert "nothing → " in diff.text()


def test_a_broken_old_sha_is_noted_and_a_broken_new_sha_fails(
        config_repo: ConfigRepo, base_files: dict[str, str]) -> None:
    broken = dict(base_files, **{CONFIG: "x: {{ nope }}\n"})
    bad = config_repo.commit(broken)
    good = config_repo.commit(base_files)
    diff = rendered_diff(config_repo.source, cluster(), old_sha=bad, new_sha=good)
    assert all(f.status == "added" for f in diff.files)
    assert diff.note.startswith(f"rendering {bad[:7]} failed, so everything shows as added: "
                                f"{CONFIG}:1: 'nope' is undefined")
    with pytest.raises(TemplateError, match=f"{CONFIG}:1: 'nope' is undefined"):
        rendered_diff(config_repo.source, cluster(), old_sha=good, new_sha=bad)


def test_capped_keeps_whole_files_cuts_one_at_a_line_and_names_the_rest() -> None:
    files = tuple(FileDiff(f"f{i}", "changed", "".join(f"+line {i}.{n}\n" for n in range(10)))
                  for i in range(4))
    size = len(files[0].text)
    diff = ClusterDiff("c", "default", "a" * 40, "b" * 40, files, note="earlier note")
    assert diff.capped(10 * size) is diff
    cut = diff.capped(size + size // 2)
    assert [f.path for f in cut.files] == ["f0", "f1"]
    assert cut.files[0] == files[0]
    assert files[1].text.startswith(cut.files[1].text) and cut.files[1].text.endswith("\n")
    assert len(cut.files[1].text) < size
    assert cut.omitted == ("f2", "f3")
    assert cut.note == (f"earlier note; the diff is cut at {size + size // 2:,} characters; "
                        "2 more changed file(s) not shown")
    assert cut.changed and cut.text().endswith(cut.files[1].text)
    nothing_fits = diff.capped(3)
    assert nothing_fits.files == () and nothing_fits.omitted == ("f0", "f1", "f2", "f3")
    assert nothing_fits.changed and "no change" not in nothing_fits.text()


CLM_TREE = {
    # CLM's templates ask AWS for an AMI and, per pool, for the instance type.
    "cluster/config-defaults.yaml": 'image: {{ amiID("ubuntu-jammy", "861068367966") }}\n',
    "cluster/cluster.yaml": "Description: main stack of {{ Cluster.ID }}\nResources: {}\n",
    "cluster/node-pools/worker-default/stack.yaml": (
        "Description: '{{ NodePool.Name }} {{ Values.InstanceInfo.VCPU }} vCPUs "
        "{{ NodePool.ConfigItems.image }} {{ Values.vpc_ipv4_cidr }}'\n"),
}


def test_a_preview_of_clms_layout_renders_without_aws_and_shows_only_the_change(
        config_repo: ConfigRepo) -> None:
    old = config_repo.commit(CLM_TREE)
    new = config_repo.commit({"cluster/cluster.yaml": CLM_TREE["cluster/cluster.yaml"].replace(
        "main stack", "the main stack")})
    layout = CLM_LAYOUT
    before = render_cluster(config_repo.source, old, cluster(), layout=layout,
                            account=preview_account(cluster(), layout))
    [pool] = before.node_pool_stacks

    diff = rendered_diff(config_repo.source, cluster(), old_sha=old, new_sha=new, layout=layout)

    # made-up answers, the same on both sides: m5.large has 2 vCPUs; the AMI id is its name's
    assert pool.text.startswith("Description: 'default 2 vCPUs ami-")
    assert [(f.path, f.status) for f in diff.files] == [(f"stacks/{cluster().local_id}.yaml",
                                                         "changed")]
    assert "+Description: the main stack of" in diff.files[0].text
