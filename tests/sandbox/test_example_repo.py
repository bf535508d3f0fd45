"""`examples/config-repo`: README's copy command makes a working config repo, and every example
cluster renders through the real CLI, so the example cannot rot."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml
from clmgit_sandbox.configrepo import GIT_ENV, ConfigRepoBuilder, example_records
from clmgit_sandbox.configtree import EXAMPLE_REPO, example_files

from tests.helpers.cli import run_cli

INIT = EXAMPLE_REPO / "init.sh"
CHANNELS = ("dev", "alpha", "beta", "stable")


def _init(target: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(INIT), str(target)], env={**os.environ, **GIT_ENV},
                          capture_output=True, text=True)


def test_init_makes_the_control_branch_and_four_channel_branches(tmp_path: Path) -> None:
    made = _init(tmp_path / "config")
    assert made.returncode == 0, made.stderr
    repo = ConfigRepoBuilder(tmp_path / "config", create=False)
    config = repo.sha("dev")
    assert [repo.sha(channel) for channel in CHANNELS] == [config] * 4
    listed = repo.git("ls-tree", "-r", "--name-only", config).splitlines()
    callers = sorted(f".github/workflows/{p.name}"
                     for p in (EXAMPLE_REPO.parent / "github-workflows").glob("*.yml"))
    assert len(callers) == 3  # on every branch: a push runs the pushed branch's workflows
    assert sorted(listed) == sorted([*example_files("cluster"), *callers])
    assert repo.git("ls-tree", "-r", "--name-only", "main", ".github").splitlines() == callers
    assert repo.git("rev-parse", "--abbrev-ref", "HEAD") == "main"
    for channel in CHANNELS:
        text = repo.git("show", f"main:channels/{channel}.yaml")
        groups = yaml.safe_load(text).get("groups") or []
        assert all(group["sha"] == config for group in groups), text
    assert repo.git("status", "--porcelain") == ""


def test_every_example_cluster_renders_at_its_channel(tmp_path: Path) -> None:
    assert _init(tmp_path / "config").returncode == 0
    expected_manifests = len([p for p in example_files("cluster")
                              if "/manifests/" in p and not p.endswith("deletions.yaml")])
    for record in example_records():
        out = tmp_path / "rendered" / str(record["alias"])
        result = run_cli("--repo", str(tmp_path / "config"), "render", "--cluster",
                         str(record["alias"]), "--out", str(out))
        assert result.code == 0, result.err
        stacks = sorted(p.name for p in (out / "stacks").iterdir())
        assert stacks == sorted([f"{record['local_id']}.yaml", f"logs-{record['local_id']}.yaml"])
        assert len(list((out / "node-pools").iterdir())) == len(record["node_pools"])
        assert len(list((out / "manifests").rglob("*.yaml"))) == expected_manifests


def test_init_refuses_a_directory_that_exists(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    refused = _init(tmp_path / "config")
    assert refused.returncode == 1 and "exists already" in refused.stderr
    assert list((tmp_path / "config").iterdir()) == []
