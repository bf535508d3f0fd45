"""Every write is a transaction. A refusal or a lost race leaves the checkout exactly
as it was — status, HEAD, every ref, the index bytes — and two writers racing end with one
commit and nothing staged. Races are forced with a barrier (tests/helpers/barrier.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clmgit.adapters import git as git_adapter
from tests.helpers.barrier import start_blocked
from tests.helpers.checkout import snapshot
from tests.helpers.fleet import Fleet, default_records
from tests.helpers.promotion import applied

pytestmark = pytest.mark.slow


def freezes(fleet: Fleet) -> list[str]:
    return fleet.builder.git("log", "--format=%s", "--grep=^freeze(", "main").splitlines()


def assert_clean(fleet: Fleet) -> None:
    assert fleet.builder.git("status", "--porcelain", "--untracked-files=no") == ""


def test_two_freezes_racing_commit_one_and_stage_nothing(fleet: Fleet, tmp_path: Path) -> None:
    args = ("freeze", "beta", "--reason", "Black Friday")
    first = start_blocked(fleet.path, args, at="commit-tree", tmp=tmp_path)
    second = fleet.cli(*args)  # wins: commits while the first waits with its stale plan
    assert second.code == 0, second.err
    after_second = snapshot(fleet.path)
    lost = first.release()
    assert lost.code == 1 and "moved to" in lost.err and "nothing changed" in lost.err
    assert lost.err.count("\n") == 1 and "Traceback" not in lost.err
    assert snapshot(fleet.path) == after_second
    assert freezes(fleet) == ["freeze(beta): Black Friday"]
    assert_clean(fleet)
    assert fleet.cli(*args).out.strip() == "beta is already frozen"


def test_losing_the_race_for_the_channel_branch_moves_nothing(
    fleet: Fleet, tmp_path: Path
) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    first = start_blocked(fleet.path, ("promote", "dev", "alpha", "--force"), at="commit-tree",
                          tmp=tmp_path)
    fleet.builder.commit("alpha", {"cluster/hotfix.yaml": "x: 1\n"}, "Hotfix on alpha")
    before = snapshot(fleet.path)
    lost = first.release()
    assert lost.code == 1 and "branch 'alpha' moved to" in lost.err
    assert snapshot(fleet.path) == before
    assert_clean(fleet)


def test_a_file_changed_mid_write_moves_the_refs_back(fleet: Fleet, tmp_path: Path) -> None:
    first = start_blocked(fleet.path, ("freeze", "beta", "--reason", "x"), at="commit-tree",
                          tmp=tmp_path)
    (fleet.path / "channels/beta.yaml").write_text(fleet.file("channels/beta.yaml") + "# mine\n")
    before = snapshot(fleet.path)
    refused = first.release()
    assert refused.code == 1 and "local changes" in refused.err
    assert snapshot(fleet.path) == before
    assert freezes(fleet) == []


def test_a_dirty_channel_file_is_refused_up_front(fleet: Fleet) -> None:
    (fleet.path / "channels/beta.yaml").write_text(fleet.file("channels/beta.yaml") + "# mine\n")
    fleet.builder.git("add", "channels/beta.yaml")
    before = snapshot(fleet.path)
    r = fleet.cli("freeze", "beta", "--reason", "x")
    assert r.code == 1 and "channels/beta.yaml has uncommitted changes" in r.err
    assert snapshot(fleet.path) == before


def test_a_branch_checked_out_in_another_worktree_is_refused(fleet: Fleet, tmp_path: Path) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    fleet.builder.git("worktree", "add", "--quiet", str(tmp_path / "alpha"), "alpha")
    before, other = snapshot(fleet.path), snapshot(tmp_path / "alpha")
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 1 and f"branch 'alpha' is checked out in {tmp_path / 'alpha'}" in r.err
    assert snapshot(fleet.path) == before and snapshot(tmp_path / "alpha") == other


def test_a_held_index_lock_is_refused(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_adapter, "INDEX_LOCK_WAIT", 0.1)
    lock = fleet.path / ".git/index.lock"
    lock.touch()
    before = snapshot(fleet.path)
    r = fleet.cli("freeze", "beta", "--reason", "x")
    assert r.code == 1 and "index.lock exists" in r.err
    assert snapshot(fleet.path) == before and lock.exists()


@pytest.mark.parametrize("args", [
    ("promote", "dev", "alpha"),  # a gate
    ("promote", "dev", "alpha", "--force", "--dry-run", "--sha", "c1"),  # a dry run: exit 0
    ("promote", "alpha", "beta", "--force"),  # frozen: --force does not lift a freeze
    ("promote", "dev", "alpha", "--sha", "c3", "--force", "--pr"),  # no GitHub repository
    ("rollback", "beta"),  # no pin to roll back
    ("sync-branches",),  # the hotfix on alpha
])
def test_every_refusal_leaves_the_checkout_as_it_was(fleet: Fleet, args) -> None:
    fleet.builder.commit("main", {"channels/beta.yaml": fleet.file("channels/beta.yaml").replace(
        "frozen: false", "frozen: true")}, "freeze beta by hand")
    fleet.set_clusters(applied(default_records(), "dev", fleet.c2))
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2).code == 0
    fleet.builder.commit("alpha", {"cluster/hotfix.yaml": "x: 1\n"}, "Hotfix on alpha")
    args = tuple(getattr(fleet, a) if a in ("c1", "c3") else a for a in args)
    before = snapshot(fleet.path)
    r = fleet.cli(*args)
    assert r.code == (0 if "--dry-run" in args else 1), r.err
    assert "Traceback" not in r.err
    assert snapshot(fleet.path) == before
