"""Every git write sequence of promote, rollback, freeze and sync-branches survives SIGKILL at
each of its git calls: the same command run again finishes the work, and the checkout ends at
its branch — nothing staged, no file behind, local branches where origin's are. And the index
is refreshed before git compares it: a touched file or a copied checkout is no local change.
Kills are placed with a git wrapper (tests/helpers/barrier.py), one run per git call where a
kill can leave a state of its own."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.helpers.barrier import (
    Zygote,
    git_command,
    kill_points,
    run_killed,
    run_killed_at_call,
    run_recorded,
)
from tests.helpers.fleet import Fleet, copy_fleet, default_records
from tests.helpers.promotion import applied, pins

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    """The kill runs' clmgit processes, forked from one that imported clmgit once."""
    forks = Zygote()
    yield forks
    forks.close()


def status(fleet: Fleet) -> str:
    return fleet.builder.git("status", "--porcelain", "--untracked-files=no")


@pytest.fixture(autouse=True)
def no_optional_locks(monkeypatch: pytest.MonkeyPatch) -> None:
    """As editors run git (VS Code sets it): `git status` then leaves the index's stat data as
    it was, so nothing but clmgit itself refreshes it."""
    monkeypatch.setenv("GIT_OPTIONAL_LOCKS", "0")


def test_a_touched_channel_file_is_no_local_change(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    fleet.builder.git("push", "--quiet", "origin", "main")
    channel = fleet.path / "channels/alpha.yaml"
    os.utime(channel, (1, 1))  # `touch`: same content, other stat data
    assert status(fleet) == ""
    r = fleet.cli("promote", "dev", "alpha", "--push")
    assert r.code == 0, r.err
    assert status(fleet) == "" and pins(fleet, "alpha") == {"default": fleet.c3}


def test_a_copied_checkout_is_no_local_change(fleet: Fleet, tmp_path: Path) -> None:
    """A CI cache restore copies the checkout: every file has new stat data."""
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    fleet.builder.git("push", "--quiet", "origin", "main")
    copy = tmp_path / "restored"
    shutil.copytree(fleet.path, copy, symlinks=True)
    restored = Fleet(fleet.builder.__class__(copy), copy, fleet.origin, fleet.c1, fleet.c2,
                     fleet.c3)
    r = restored.cli("promote", "dev", "alpha", "--push")
    assert r.code == 0, r.err
    assert status(restored) == "" and pins(restored, "alpha") == {"default": fleet.c3}


def test_killed_after_the_ref_moved_the_rerun_brings_the_checkout_along(
        fleet: Fleet, tmp_path: Path) -> None:
    """Killed after main moved and before its index and files followed: the old pin is staged
    (a revert the next `git commit -a` would land) until a clmgit runs again, which finishes
    the sync the killed one left in its lock — even a run that has nothing to do."""
    args = _promote(fleet)
    assert run_killed(fleet.path, args, at="read-tree -m", tmp=tmp_path).code == -9
    assert status(fleet) != ""  # left behind its branch
    again = fleet.cli(*args)
    assert again.code == 0 and again.out.strip() == f"alpha already at {fleet.c3[:7]}"
    assert status(fleet) == "" and pins(fleet, "alpha") == {"default": fleet.c3}
    assert not (fleet.path / ".git/index.lock").exists()


def _promote(fleet: Fleet) -> tuple[str, ...]:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    return ("promote", "dev", "alpha", "--push")


def _rollback(fleet: Fleet) -> tuple[str, ...]:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2, "--push").code == 0
    assert fleet.cli("promote", "dev", "alpha", "--push").code == 0
    return ("rollback", "alpha", "--to", fleet.c2, "--push")


def _freeze(fleet: Fleet) -> tuple[str, ...]:
    return ("freeze", "beta", "--reason", "release week", "--push")


def _promote_local(fleet: Fleet) -> tuple[str, ...]:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    return ("promote", "dev", "alpha")


def _sync(fleet: Fleet) -> tuple[str, ...]:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha", "--push").code == 0
    fleet.builder.git("branch", "--force", "alpha", fleet.c1)  # the branch behind its pin
    return ("sync-branches",)


SCENARIOS = {"promote --push": _promote, "rollback --push": _rollback,
             "freeze --push": _freeze, "promote": _promote_local, "sync-branches": _sync}


def outcome(fleet: Fleet) -> tuple[dict[str, str | None], str, bool]:
    """What a run leaves, comparable across fleets (their commits differ by time): alpha's pins
    by commit name, alpha's tree, whether beta is frozen."""
    names: dict[str | None, str | None] = {fleet.c1: "c1", fleet.c2: "c2", fleet.c3: "c3"}
    frozen = yaml.safe_load(fleet.file("channels/beta.yaml")).get("frozen", False)
    return ({g: names.get(sha, sha) for g, sha in pins(fleet, "alpha").items()},
            fleet.builder.git("rev-parse", "alpha^{tree}"), bool(frozen))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_run_killed_at_any_git_call_is_finished_by_a_rerun(fleet: Fleet, tmp_path: Path,
                                                             scenario: str,
                                                             zygote: Zygote) -> None:
    """The scenario is set up once; the reference run and each kill start from a copy of it.
    The reference run records its git calls; a kill goes before each call where the state can
    differ from the last one killed at (`kill_points`), and the killed run must have made the
    reference's calls up to there."""
    args = SCENARIOS[scenario](fleet)
    reference = copy_fleet(fleet, tmp_path / "reference" / "config")
    (tmp_path / "reference-bin").mkdir()
    done, calls = run_recorded(reference.path, args, watched=(reference.path, reference.origin),
                               tmp=tmp_path / "reference-bin", zygote=zygote)
    assert done.code == 0, done.err
    expected = outcome(reference)
    points = kill_points(calls)
    killed_at = []
    for n in points:
        copy = copy_fleet(fleet, tmp_path / f"k{n}" / "config")
        (tmp_path / f"k{n}-bin").mkdir()
        killed, made = run_killed_at_call(copy.path, args, n=n, tmp=tmp_path / f"k{n}-bin",
                                          zygote=zygote)
        where = f"killed at git call {n} ({' '.join(calls[n - 1].argv)})"
        assert killed.code == -9, (where, killed.err)
        assert [git_command(c) for c in made] == [c.command for c in calls[:n]], where
        killed_at.append(n)
        again = copy.cli(*args)
        assert again.code == 0, (where, again.err)
        assert status(copy) == "", where
        assert not (copy.path / ".git/index.lock").exists(), where
        assert outcome(copy) == expected, where
        if "--push" in args:
            for branch in ("main", "alpha"):
                origin = copy.builder.git("--git-dir", str(copy.origin), "rev-parse", branch)
                assert copy.branch(branch) == origin, (where, branch)
    assert killed_at == points and len(calls) > 5
