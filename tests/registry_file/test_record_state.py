"""The file registry's state is committed by clmgit (issue 30): what a run writes into a tracked
`clusters.yaml` lands on the control branch in a commit of its own, the checkout is clean after
it, and a person's uncommitted edit is never swept into it."""

from __future__ import annotations

import pytest

from clmgit.errors import RefusedError
from clmgit.model import ClusterStatus
from clmgit.reconcile.record import record_state, tracked_registry
from clmgit.registry.file import FileRegistry
from clmgit.workspace import Workspace, open_workspace
from tests.helpers.cli import run_cli
from tests.helpers.fleet import Fleet

DEV = "aws:123456789012:eu-central-1:dev-1"
BETA = "aws:123456789012:eu-central-1:beta-1"


def write_status(fleet: Fleet, cluster_id: str, version: str) -> None:
    """What reconcile does to a record: under a lease, its status."""
    registry = FileRegistry(fleet.path / "clusters.yaml")
    assert registry.acquire(cluster_id, "test-holder", 60) is not None
    registry.record(cluster_id, "test-holder", release=True, status=ClusterStatus(
        current_version=version, applied_at="2026-11-24T19:00:00Z"))


def git_status(fleet: Fleet) -> str:
    return fleet.builder.git("status", "--porcelain")


def test_the_state_is_committed_and_the_checkout_is_clean(fleet: Fleet) -> None:
    before = fleet.branch("main")
    write_status(fleet, DEV, f"{fleet.c3}#abc")
    assert git_status(fleet) == "M clusters.yaml"
    text = fleet.file("clusters.yaml")

    recorded = record_state(open_workspace(str(fleet.path)))

    assert recorded is not None and recorded.commit == fleet.branch("main") != before
    assert git_status(fleet) == ""
    assert fleet.builder.git("show", "main:clusters.yaml") + "\n" == text
    message = fleet.builder.git("log", "-1", "--format=%B", "main")
    assert message.startswith("Record the state of 1 cluster\n")
    assert "- dev-1" in message and "Clmgit-Action: record" in message
    assert fleet.builder.git("rev-parse", "main^") == before
    # nothing new: nothing committed
    assert record_state(open_workspace(str(fleet.path))) == recorded.__class__(
        "clusters.yaml", None)
    # git checkout of another branch works again
    fleet.builder.git("checkout", "--quiet", "dev")


def test_several_clusters_one_commit_and_the_history_shows_it(fleet: Fleet) -> None:
    write_status(fleet, DEV, f"{fleet.c3}#abc")
    write_status(fleet, BETA, f"{fleet.c1}#def")
    record_state(open_workspace(str(fleet.path)))
    assert fleet.builder.git("log", "-1", "--format=%s", "main") == (
        "Record the state of 2 clusters")
    assert fleet.builder.git("diff", "--name-only", "main^", "main") == "clusters.yaml"


def test_a_persons_uncommitted_edit_is_left_alone(fleet: Fleet) -> None:
    write_status(fleet, DEV, f"{fleet.c3}#abc")
    path = fleet.path / "clusters.yaml"
    path.write_text(path.read_text().replace("environment: production", "environment: prod"))
    before, text = fleet.branch("main"), path.read_text()

    recorded = record_state(open_workspace(str(fleet.path)))

    assert recorded is not None and recorded.commit is None
    assert "besides clmgit's status fields" in recorded.note
    assert (fleet.branch("main"), path.read_text()) == (before, text)


def test_staged_work_of_a_person_stays_staged_and_out_of_the_commit(fleet: Fleet) -> None:
    (fleet.path / "notes.txt").write_text("mine\n")
    fleet.builder.git("add", "notes.txt")
    write_status(fleet, DEV, f"{fleet.c3}#abc")
    record_state(open_workspace(str(fleet.path)))
    assert fleet.builder.git("diff", "--name-only", "main^", "main") == "clusters.yaml"
    assert git_status(fleet) == "A  notes.txt"


def test_push_lands_it_on_origin(fleet: Fleet) -> None:
    write_status(fleet, DEV, f"{fleet.c3}#abc")
    recorded = record_state(open_workspace(str(fleet.path)), push=True)
    assert recorded is not None and recorded.pushed
    origin = fleet.builder.git("ls-remote", str(fleet.origin), "refs/heads/main").split()[0]
    assert origin == recorded.commit == fleet.branch("main")


def test_a_rejected_push_keeps_the_state_committed_here(fleet: Fleet, tmp_path) -> None:
    """origin moved on meanwhile (a teammate's promotion): the state is not lost."""
    other = tmp_path / "other"
    fleet.builder.git("clone", "--quiet", str(fleet.origin), str(other))
    (other / "README.md").write_text("hello\n")
    for args in (("add", "README.md"), ("-c", "user.name=x", "-c", "user.email=x@y", "commit",
                                         "--quiet", "-m", "Teammate"), ("push", "--quiet")):
        fleet.builder.git("-C", str(other), *args)
    write_status(fleet, DEV, f"{fleet.c3}#abc")

    recorded = record_state(open_workspace(str(fleet.path)), push=True)

    assert recorded is not None and not recorded.pushed
    assert recorded.commit == fleet.branch("main") and git_status(fleet) == ""
    assert "git pull --rebase" in recorded.note


def test_only_a_tracked_registry_on_the_checked_out_control_branch(fleet: Fleet,
                                                                   tmp_path) -> None:
    ws = open_workspace(str(fleet.path))
    assert tracked_registry(ws) == "clusters.yaml"
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(fleet.file("clusters.yaml"))
    assert tracked_registry(open_workspace(str(fleet.path), registry=str(outside))) is None
    fleet.builder.git("checkout", "--quiet", "dev")
    assert tracked_registry(open_workspace(str(fleet.path))) is None


def test_reconcile_push_without_a_tracked_registry_is_refused_up_front(fleet: Fleet,
                                                                       tmp_path) -> None:
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(fleet.file("clusters.yaml"))
    r = run_cli("--repo", str(fleet.path), "--registry", str(outside), "reconcile", "--push")
    assert r.code == 1 and r.out == ""
    assert r.err.startswith("error: --push pushes the state a file registry records")
    assert r.err.count("\n") == 1


def test_a_lost_race_is_retried_on_top_of_the_other_commit(fleet: Fleet,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Another run committed on main between our read and our write: ours goes on top."""
    write_status(fleet, DEV, f"{fleet.c3}#abc")
    ws = open_workspace(str(fleet.path))
    assert ws.control_sha  # the plan's view of main, before the other commit
    fleet.builder.commit("main", {"channels/dev.yaml": fleet.file("channels/dev.yaml") + "\n"},
                         "Another run")
    other = fleet.branch("main")
    calls: list[str] = []
    original = Workspace.write

    def write(*args, **kwargs):
        calls.append("write")
        return original(*args, **kwargs)

    monkeypatch.setattr(Workspace, "write", write)
    recorded = record_state(ws)
    assert recorded is not None and fleet.builder.git("rev-parse", "main^") == other
    assert calls == ["write", "write"]


def test_refused_for_good_after_the_attempts(fleet: Fleet,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    write_status(fleet, DEV, f"{fleet.c3}#abc")

    def write(*args, **kwargs):
        raise RefusedError("branch 'main' moved")

    monkeypatch.setattr(Workspace, "write", write)
    with pytest.raises(RefusedError):
        record_state(open_workspace(str(fleet.path)))


def _dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_lock_a_killed_clmgit_left_is_taken_over(fleet: Fleet) -> None:
    """SIGKILL while committing leaves `.git/index.lock`: the next run recognises it as a dead
    clmgit's and goes on; a lock of git's own or of a live process is never removed."""
    from clmgit.adapters import git as gitmod

    lock = fleet.path / ".git" / "index.lock"
    lock.write_bytes(gitmod._lock_marker(_dead_pid()))
    write_status(fleet, DEV, f"{fleet.c3}#abc")
    recorded = record_state(open_workspace(str(fleet.path)))
    assert recorded is not None and recorded.commit and not lock.exists()


@pytest.mark.parametrize("content", ["git", "live", "other boot"])
def test_other_locks_are_left_alone(fleet: Fleet, monkeypatch: pytest.MonkeyPatch,
                                    content: str) -> None:
    import os

    from clmgit.adapters import git as gitmod

    monkeypatch.setattr(gitmod, "INDEX_LOCK_WAIT", 0.2)
    data = {"git": b"DIRC\x00\x00\x00\x02", "live": gitmod._lock_marker(os.getpid()),
            "other boot": gitmod._lock_marker(_dead_pid()).replace(b"ns=", b"ns=x")}[content]
    lock = fleet.path / ".git" / "index.lock"
    lock.write_bytes(data)
    write_status(fleet, DEV, f"{fleet.c3}#abc")
    with pytest.raises(RefusedError, match="index.lock exists"):
        record_state(open_workspace(str(fleet.path)), attempts=1)
    assert lock.read_bytes() == data


def test_the_committed_state_is_in_the_cache_the_next_job_restores(
        fleet: Fleet, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CI saves clmgit's cache after the reconcile job; the jobs after it read the file that job
    committed, so its parse must be in that cache, not only the parse of the file it started
    from."""
    from clmgit.registry import records

    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(tmp_path / "cache"))
    write_status(fleet, DEV, f"{fleet.c3}#abc")
    record_state(open_workspace(str(fleet.path)))
    committed = (fleet.path / "clusters.yaml").read_bytes()
    parsed = records._parse_text(committed, "clusters.yaml")

    def unparsed(text: object, name: str) -> None:
        raise AssertionError("parsed again, not read from the cache")

    monkeypatch.setattr(records, "load_written", unparsed)
    assert records.parse_file(committed, "clusters.yaml") == parsed
