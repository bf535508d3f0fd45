"""The file registry leaves no litter in the checkout: the copies of killed writes are removed
by the next run, and the lock and lease files are excluded from git."""

from __future__ import annotations

import subprocess

import pytest

from clmgit.registry.file import exclude_from_git
from tests.helpers.fleet import Fleet


def _porcelain(fleet: Fleet) -> list[str]:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                          cwd=fleet.path, capture_output=True, text=True,
                          check=True).stdout.splitlines()


def test_after_a_killed_write_a_reconcile_leaves_a_clean_checkout(
    fleet: Fleet, moto_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a write killed between creating its copy and renaming it leaves behind.
    (fleet.path / ".clusters.yaml.k1ll3d.tmp").write_text("clusters: []\n")
    (fleet.path / "..clusters.yaml.leases.k1ll3d.tmp").write_text("{}")
    fleet.builder.commit("dev", {"cluster/stack.yaml": "v: {{ nope }}\n"}, "A broken stack")
    r = fleet.cli("reconcile", "--cluster", "dev-1", "--token", "never-used")
    assert r.code == 4, r.err  # the cluster failed, and its problem was recorded
    assert _porcelain(fleet) == []  # ... and committed by clmgit
    assert fleet.builder.git("log", "-1", "--format=%s", "main") == (
        "Record the state of 1 cluster")
    # Run again: the exclusions are not added twice.
    assert fleet.cli("reconcile", "--cluster", "dev-1", "--token", "never-used").code == 4
    exclude = (fleet.path / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude.count(".clusters.yaml.lock") == 1
    assert _porcelain(fleet) == []


def test_a_linked_worktree_excludes_in_the_common_git_dir(fleet: Fleet, tmp_path) -> None:
    worktree = tmp_path / "wt"
    fleet.builder.git("worktree", "add", str(worktree), "dev")
    exclude_from_git(worktree, [".clusters.yaml.lock"])
    assert ".clusters.yaml.lock" in (
        fleet.path / ".git" / "info" / "exclude").read_text().splitlines()
