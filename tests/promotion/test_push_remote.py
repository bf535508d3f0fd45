"""`--push` plans on the remote's branches, so a run killed after its push landed, or
one that lost the race to another clone, is finished by running it again — it says "already at"
or promotes on top, and brings the local branches to the remote's. A push rejected mid-flight
leaves every local ref as it was and names the command that works."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers.barrier import run_killed, start_blocked
from tests.helpers.checkout import snapshot
from tests.helpers.cli import run_cli
from tests.helpers.fleet import Fleet, default_records
from tests.helpers.promotion import applied, pins

pytestmark = pytest.mark.slow


def on_origin(fleet: Fleet, branch: str) -> str:
    return fleet.builder.git("--git-dir", str(fleet.origin), "rev-parse", branch)


def assert_local_is_remote(fleet: Fleet, *branches: str) -> None:
    for branch in branches:
        assert fleet.branch(branch) == on_origin(fleet, branch), branch
    assert fleet.builder.git("status", "--porcelain", "--untracked-files=no") == ""


def other_clone(fleet: Fleet, tmp_path: Path) -> Path:
    fleet.builder.git("push", "--quiet", "origin", "main")  # the registry, for both clones
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "--quiet", str(fleet.origin), str(other)], check=True)
    for branch in ("dev", "alpha", "beta", "stable"):
        subprocess.run(["git", "-C", str(other), "branch", "--quiet", branch, f"origin/{branch}"],
                       check=True)
    return other


def test_a_run_killed_after_its_push_landed_is_finished_by_a_rerun(
    fleet: Fleet, tmp_path: Path
) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    killed = run_killed(fleet.path, ("promote", "dev", "alpha", "--push"), at="update-ref",
                        tmp=tmp_path)
    assert killed.code == -9
    assert on_origin(fleet, "alpha") == fleet.c3 and fleet.branch("alpha") == fleet.c1
    assert on_origin(fleet, "main") != fleet.branch("main")

    r = fleet.cli("promote", "dev", "alpha", "--push")
    assert r.code == 0, r.err
    assert r.out.strip() == f"alpha already at {fleet.c3[:7]}"
    assert_local_is_remote(fleet, "main", "alpha")
    assert pins(fleet, "alpha") == {"default": fleet.c3}  # the checkout came along


def test_freeze_killed_after_its_push_is_finished_by_a_rerun(fleet: Fleet, tmp_path: Path) -> None:
    args = ("freeze", "beta", "--reason", "release week", "--push")
    assert run_killed(fleet.path, args, at="update-ref", tmp=tmp_path).code == -9
    r = fleet.cli(*args)
    assert r.code == 0 and r.out.strip() == "beta is already frozen"
    assert_local_is_remote(fleet, "main")


def test_rollback_killed_after_its_push_is_finished_by_a_rerun(
    fleet: Fleet, tmp_path: Path
) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2, "--push").code == 0
    assert fleet.cli("promote", "dev", "alpha", "--push").code == 0
    args = ("rollback", "alpha", "--to", fleet.c2, "--push")
    assert run_killed(fleet.path, args, at="update-ref", tmp=tmp_path).code == -9
    assert on_origin(fleet, "alpha") != fleet.branch("alpha")
    r = fleet.cli(*args)
    assert r.code == 0 and r.out.strip() == f"alpha already at {fleet.c2[:7]}"
    assert_local_is_remote(fleet, "main", "alpha")
    assert pins(fleet, "alpha") == {"default": fleet.c2}


@pytest.mark.parametrize("theirs", ["same", "earlier"])
def test_another_clone_promoted_first(fleet: Fleet, tmp_path: Path, theirs: str) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    other = other_clone(fleet, tmp_path)
    sha = ("--sha", fleet.c2) if theirs == "earlier" else ()
    r = run_cli("--repo", str(other), "--registry", str(fleet.path / "clusters.yaml"),
                "promote", "dev", "alpha", *sha, "--push")
    assert r.code == 0, r.err
    landed_by_them = on_origin(fleet, "main")

    r = fleet.cli("promote", "dev", "alpha", "--push")
    assert r.code == 0, r.err
    if theirs == "same":
        assert r.out.strip() == f"alpha already at {fleet.c3[:7]}"
        assert on_origin(fleet, "main") == landed_by_them
    else:  # a forward promotion on top of theirs
        assert fleet.builder.git("rev-parse", "main^") == landed_by_them
    assert on_origin(fleet, "alpha") == fleet.c3
    assert_local_is_remote(fleet, "main", "alpha")


def test_a_push_rejected_mid_flight_changes_nothing_and_names_the_command(
    fleet: Fleet, tmp_path: Path
) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    other = other_clone(fleet, tmp_path / "clone")
    args = ("promote", "dev", "alpha", "--push")
    first = start_blocked(fleet.path, args, at="commit-tree", tmp=tmp_path)
    subprocess.run(["git", "-C", str(other), "-c", "user.name=x", "-c", "user.email=x@y",
                    "commit", "--quiet", "--allow-empty", "-m", "someone else"], check=True)
    subprocess.run(["git", "-C", str(other), "push", "--quiet", "origin", "main"], check=True)
    before = snapshot(fleet.path)
    r = first.release()
    assert r.code == 1 and "rejected" in r.err and r.err.count("\n") == 1
    assert r.err.rstrip().endswith(f"clmgit --repo {fleet.path} promote dev alpha --push")
    assert snapshot(fleet.path) == before

    r = fleet.cli(*args)  # the command it names works
    assert r.code == 0, r.err
    assert fleet.builder.git("log", "-1", "--format=%s", "main^") == "someone else"
    assert_local_is_remote(fleet, "main", "alpha")


def test_sync_branches_push_after_another_clone_promoted(fleet: Fleet, tmp_path: Path) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    other = other_clone(fleet, tmp_path)
    # their promotion of alpha lands on origin's main without the branch move (as a merged PR)
    r = run_cli("--repo", str(other), "--registry", str(fleet.path / "clusters.yaml"),
                "promote", "dev", "alpha")
    assert r.code == 0, r.err
    subprocess.run(["git", "-C", str(other), "push", "--quiet", "origin", "main"], check=True)
    assert on_origin(fleet, "alpha") == fleet.c1

    r = fleet.cli("sync-branches", "--push")
    assert r.code == 0, r.err
    assert on_origin(fleet, "alpha") == fleet.c3
    assert_local_is_remote(fleet, "main", "alpha")
