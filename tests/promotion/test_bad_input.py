"""Bad input exits 1 with one sentence naming the file or value; no traceback; nothing written."""

from __future__ import annotations

import pytest

from tests.helpers.fleet import Fleet


def assert_refused(fleet: Fleet, *args: str, says: str) -> None:
    head = fleet.branch("main")
    r = fleet.cli(*args)
    assert r.code == 1, (r.code, r.out, r.err)
    assert says in r.err
    assert r.err.startswith("error: ") and r.err.count("\n") == 1 and "Traceback" not in r.err
    assert fleet.branch("main") == head


@pytest.mark.parametrize(
    "args, says",
    [
        (("promote", "dev", "nope"), "unknown channel 'nope'"),
        (("promote", "dev", "beta", "--group", "blue"), "has no group 'blue'"),
        (("rollback", "beta", "--group", "blue"), "has no group 'blue'"),
        (("history", "nope"), "unknown channel 'nope'"),
        (("status", "--channel", "nope"), "unknown channel 'nope'"),
        (("freeze", "beta", "--reason", " "), "needs a reason"),
        (("promote", "dev", "alpha", "--sha", "not-a-sha"), "'not-a-sha' is not a commit SHA"),
    ],
)
def test_unknown_names(fleet: Fleet, args, says) -> None:
    assert_refused(fleet, *args, says=says)


def test_malformed_channel_file(fleet: Fleet) -> None:
    fleet.builder.commit("main", {"channels/beta.yaml": "channel: beta\ngroups: [\n"}, "break it")
    assert_refused(fleet, "status", says="channels/beta.yaml: malformed YAML at line")


def test_invalid_pin_in_channel_file(fleet: Fleet) -> None:
    text = fleet.file("channels/alpha.yaml") + "    sha: abc123\n"
    fleet.builder.commit("main", {"channels/alpha.yaml": text}, "short sha")
    assert_refused(fleet, "status", says="group 'default': sha must be a full 40-hex commit SHA")


def test_missing_branch(fleet: Fleet) -> None:
    fleet.builder.git("branch", "-D", "dev")
    fleet.builder.git("branch", "-D", "-r", "origin/dev")  # else read from there
    assert_refused(fleet, "promote", "dev", "alpha", says="branch 'dev' does not exist")


def test_no_registry(fleet: Fleet) -> None:
    fleet.builder.commit("main", {"clusters.yaml": None}, "drop the registry")
    assert_refused(fleet, "promote", "dev", "alpha", says="no registry")
    assert_refused(fleet, "status", says="clusters.yaml does not exist")


def test_malformed_registry(fleet: Fleet) -> None:
    (fleet.path / "clusters.yaml").write_text("clusters:\n  - id: a\n   bad: [\n")
    assert_refused(fleet, "status", says="clusters.yaml: malformed YAML")


def test_not_a_repository(tmp_path) -> None:
    from tests.helpers.cli import run_cli
    r = run_cli("--repo", str(tmp_path), "status")
    assert r.code == 1 and "is not a git repository" in r.err


def test_usage_error_exits_2(fleet: Fleet) -> None:
    r = fleet.cli("promote", "dev")
    assert r.code == 2
