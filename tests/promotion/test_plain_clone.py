"""A plain `git clone` of a config repo works. There, only the control branch is
local and the channel branches are `origin/<channel>`; clmgit reads them there (a local branch,
where there is one, still comes first), and a promotion that moves a channel branch creates the
local branch at its new commit. Run from a subdirectory, clmgit finds the checkout as git does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fleet import Fleet, default_records
from tests.helpers.promotion import applied

pytestmark = pytest.mark.slow


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def clone(fleet: Fleet, tmp_path: Path) -> Path:
    """`git clone` of the fleet's origin: `main` local, the channel branches remote only."""
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    fleet.builder.git("push", "--quiet", "origin", "main")
    path = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(fleet.origin), str(path)], check=True)
    assert git(path, "branch", "--format=%(refname:short)") == "main"
    return path


def local_branch(repo: Path, name: str) -> str | None:
    out = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet",
                          f"refs/heads/{name}"], capture_output=True, text=True)
    return out.stdout.strip() or None


def test_read_only_commands_read_channel_branches_from_origin(fleet: Fleet, clone: Path) -> None:
    for args in (("status",), ("diff", "dev", "alpha"), ("promote", "dev", "alpha", "--dry-run"),
                 ("history",), ("render", "--cluster", "dev-1")):
        r = run_cli("--repo", str(clone), *args)
        assert r.code == 0, (args, r.err)
    r = run_cli("--repo", str(clone), "promote", "dev", "alpha", "--dry-run")
    assert fleet.c3[:7] in r.out
    assert local_branch(clone, "alpha") is None  # a dry run writes nothing


def test_a_local_branch_comes_before_origin(fleet: Fleet, clone: Path) -> None:
    r = run_cli("--repo", str(clone), "promote", "dev", "alpha", "--dry-run")
    assert "move branch alpha" in r.out  # origin/alpha is at c1
    git(clone, "branch", "alpha", fleet.c3)  # the local alpha is ahead of origin/alpha
    r = run_cli("--repo", str(clone), "promote", "dev", "alpha", "--dry-run")
    assert r.code == 0, r.err
    assert fleet.c3[:7] in r.out and "move branch alpha" not in r.out


def test_a_promotion_in_a_clone_creates_the_local_channel_branch(
    fleet: Fleet, clone: Path
) -> None:
    r = run_cli("--repo", str(clone), "promote", "dev", "alpha")
    assert r.code == 0, r.err
    assert local_branch(clone, "alpha") == fleet.c3  # a fast-forward of origin/alpha
    assert git(clone, "rev-parse", "origin/alpha") == fleet.c1  # the remote is not touched
    assert f"sha: {fleet.c3}" in (clone / "channels/alpha.yaml").read_text()
    assert git(clone, "status", "--porcelain") == ""


def test_commands_run_from_a_subdirectory_of_the_checkout(
    fleet: Fleet, clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLMGIT_REPO", raising=False)
    monkeypatch.delenv("CLMGIT_REGISTRY", raising=False)
    monkeypatch.chdir(clone / "channels")
    r = run_cli("status")
    assert r.code == 0, r.err
    assert "alpha-1" in r.out  # the registry: clusters.yaml at the top of the checkout
    r = run_cli("promote", "dev", "alpha")
    assert r.code == 0, r.err
    assert f"sha: {fleet.c3}" in (clone / "channels/alpha.yaml").read_text()
