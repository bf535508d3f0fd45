"""`convert --all-sources` on two real repositories (bare origins): each source converted onto
`dev-jinja` in its own repository; `--check` renders each source with the defaults of both
composed (the add-on source uses an item only the main source's defaults define, which CLM's
missing-key error would refuse were the source checked alone); a refusal in one source writes
nothing in any."""

from __future__ import annotations

from clmgit_sandbox.configrepo import ConfigRepoBuilder

from clmgit.adapters.git import run_git
from tests.helpers.cli import run_cli
from tests.helpers.clm_files import CLM_FILES
from tests.helpers.sources import TwoSources, two_sources

ADDONS = {
    "cluster/config-defaults.yaml": "tier: addon-tier\n",
    "cluster/manifests/addon/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: addon\n"
        "data:\n  tier: {{ .Cluster.ConfigItems.tier }}\n"
        "  replicas: \"{{ .Cluster.ConfigItems.replicas }}\"\n"),
}


def _repos(tmp_path, addons: dict[str, str] = ADDONS) -> TwoSources:
    return two_sources(tmp_path, main_tree=CLM_FILES, addons_tree=addons, records=[])


def _exists(b: ConfigRepoBuilder, branch: str) -> bool:
    return run_git(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], cwd=b.path,
                   ok=(0, 1)).returncode == 0


def test_every_source_converts_and_checks_composed(tmp_path) -> None:
    repos = _repos(tmp_path)

    result = run_cli("--repo", str(repos.main.path), "convert", "--all-sources", "--from", "dev",
                     "--check", "--ec2", "offline")

    assert result.code == 0, result.err + result.out
    assert "main dev (" in result.out and "addons dev (" in result.out
    assert result.out.count("all byte-identical") == 2
    for builder in (repos.main, repos.addons):
        assert builder.git("rev-parse", "dev-jinja^") == builder.sha("dev")
    converted = repos.addons.git("show", "dev-jinja:cluster/manifests/addon/cm.yaml")
    assert "{{ Cluster.ConfigItems.tier }}" in converted


def test_a_refusal_in_one_source_writes_nothing_anywhere(tmp_path) -> None:
    broken = {**ADDONS, "cluster/manifests/addon/loop.yaml":
              "a: 1\n{{ range .Cluster.NodePools }}{{ break }}{{ end }}\n"}
    repos = _repos(tmp_path, broken)

    result = run_cli("--repo", str(repos.main.path), "convert", "--all-sources", "--from", "dev",
                     "--check", "--ec2", "offline")

    assert result.code == 1
    assert "cluster/manifests/addon/loop.yaml:2" in result.err
    assert not _exists(repos.main, "dev-jinja") and not _exists(repos.addons, "dev-jinja")


def test_the_add_on_source_alone_does_not_check(tmp_path) -> None:
    """Why the check composes: alone, the add-on source misses the main source's defaults."""
    repos = _repos(tmp_path)
    repos.addons.commit("dev", {"cluster/cluster.yaml": "Resources: {}\n"}, "A main stack")

    result = run_cli("--repo", str(repos.addons.path), "convert", "--from", "dev", "--check",
                     "--ec2", "offline", "--dry-run")

    assert result.code == 1
    assert "replicas" in result.out + result.err
