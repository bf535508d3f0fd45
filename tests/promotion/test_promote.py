"""Promotion semantics (docs/explanation/promotion.md), through the real CLI on a real repo with a
bare origin."""

from __future__ import annotations

import subprocess
from datetime import datetime, timedelta

import pytest
import yaml

from clmgit.errors import RefusedError
from clmgit.promotion.promote import check, plan_promotion
from clmgit.workspace import open_workspace
from tests.helpers.fleet import Fleet, default_records
from tests.helpers.promotion import applied, last_message, pins, tree


def test_gate_refuses_until_source_clusters_applied_then_promotes(fleet: Fleet) -> None:
    before = fleet.branch("main")
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 1
    assert "have not applied" in r.err and "dev-1" in r.err
    assert "promote again once reconcile has applied it there" in r.err  # the next step
    assert "Traceback" not in r.err and r.err.count("\n") == 1
    assert fleet.branch("main") == before

    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 0, r.err
    assert pins(fleet, "alpha") == {"default": fleet.c3}
    subject = fleet.builder.git("log", "-1", "--format=%s", "main")
    assert (
        subject == f"promote(alpha): dev {fleet.c1[:7]}..{fleet.c3[:7]} [default]"
        or subject == f"promote(alpha): dev none..{fleet.c3[:7]} [default]"
    )
    message = last_message(fleet)
    assert f"Clmgit-Sha: {fleet.c3}" in message
    assert "Clmgit-Source: dev" in message and "Clmgit-Groups: default" in message
    assert fleet.branch("alpha") == fleet.c3  # the only group is at the SHA: the branch follows


def test_shortlog_lists_only_commits_touching_cluster(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2).code == 0
    assert fleet.cli("promote", "dev", "alpha").code == 0
    message = last_message(fleet)
    assert message.splitlines()[0] == (
        f"promote(alpha): dev {fleet.c2[:7]}..{fleet.c3[:7]} [default]"
    )
    assert "Raise the version to 3" in message
    assert "Docs only" not in message and "Raise the version to 2" not in message


def test_idempotent_second_promotion(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha").code == 0
    head = fleet.branch("main")
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 0
    assert r.out.strip() == f"alpha already at {fleet.c3[:7]}"
    assert fleet.branch("main") == head


def test_sha_must_be_on_source_branch(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    r = fleet.cli("promote", "dev", "alpha", "--sha", fleet.branch("main"))
    assert r.code == 1 and "is not on branch 'dev'" in r.err
    r = fleet.cli("promote", "dev", "alpha", "--sha", "deadbeef")
    assert r.code == 1 and "does not exist" in r.err


def test_source_groups_that_disagree_are_refused(fleet: Fleet) -> None:
    records = applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c3)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2).code == 0
    assert fleet.cli("promote", "alpha", "beta", "--force").code == 0
    assert fleet.cli("promote", "dev", "alpha").code == 0
    assert fleet.cli("promote", "alpha", "beta", "--group", "canary", "--force").code == 0
    r = fleet.cli("promote", "beta", "stable")
    assert r.code == 1 and "different SHAs" in r.err and "--sha" in r.err


def test_promotion_from_pinned_source_uses_the_agreed_sha(fleet: Fleet) -> None:
    records = applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c2)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2).code == 0
    assert fleet.cli("promote", "alpha", "beta").code == 0
    assert pins(fleet, "beta") == {"canary": fleet.c2, "default": fleet.c2}


def test_forward_only_and_force_recorded(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha").code == 0
    head = fleet.branch("main")
    r = fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2)
    assert r.code == 1 and "only moves forward" in r.err
    assert fleet.branch("main") == head
    r = fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2, "--force")
    assert r.code == 0, r.err
    message = last_message(fleet)
    assert "Clmgit-Override: force" in message and "only moves forward" in message
    # the branch goes back by a promotion merge on top of c3, never by rewriting it
    parents = fleet.builder.git("log", "-1", "--format=%P", "alpha").split()
    assert parents == [fleet.c3, fleet.c2]
    assert tree(fleet, "alpha") == tree(fleet, fleet.c2)


def test_canary_first_then_rest_moves_branch(fleet: Fleet) -> None:
    records = applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c3)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha").code == 0
    r = fleet.cli("promote", "alpha", "beta", "--group", "canary")
    assert r.code == 0, r.err
    assert pins(fleet, "beta") == {"canary": fleet.c3, "default": None}
    assert fleet.branch("beta") == fleet.c1  # not every group is there yet
    assert "[canary]" in fleet.builder.git("log", "-1", "--format=%s", "main")
    r = fleet.cli("promote", "alpha", "beta")
    assert r.code == 0, r.err
    assert pins(fleet, "beta") == {"canary": fleet.c3, "default": fleet.c3}
    assert fleet.branch("beta") == fleet.c3


def test_channel_file_keeps_comments_order_and_quoting(fleet: Fleet) -> None:
    records = applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c3)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha").code == 0
    before = fleet.file("channels/beta.yaml")
    assert fleet.cli("promote", "alpha", "beta", "--group", "canary").code == 0
    after = fleet.file("channels/beta.yaml")
    added = [ln for ln in after.splitlines() if ln not in before.splitlines()]
    assert [ln.split(":")[0].strip() for ln in added] == ["sha", "promoted_at", "promoted_from"]
    assert [ln for ln in after.splitlines() if ln in before.splitlines()] == before.splitlines()
    # a second promotion replaces values in place and keeps their quoting
    fleet.set_clusters(applied(records, "alpha", fleet.c3))
    assert fleet.cli("rollback", "beta", "--group", "canary", "--to", fleet.c2).code == 0
    again = fleet.file("channels/beta.yaml")
    assert len(again.splitlines()) == len(after.splitlines())
    changed = [
        (a, b) for a, b in zip(after.splitlines(), again.splitlines(), strict=True) if a != b
    ]
    assert {a.split(":")[0].strip() for a, _ in changed} <= {"sha", "promoted_at", "promoted_from"}
    assert 'promoted_at: "' in again


def test_soak_gate_and_its_override(fleet: Fleet) -> None:
    records = applied(default_records(), "dev", fleet.c3)
    records = applied(records, "alpha", fleet.c3, ago=timedelta(minutes=30))
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha").code == 0
    r = fleet.cli("promote", "alpha", "beta")
    assert r.code == 1 and "soaked" in r.err and "left (--force overrides)" in r.err
    # The exact figure through the library, at a fixed time: the CLI reads the wall clock.
    applied_at = datetime.fromisoformat(records[1]["status"]["applied_at"].replace("Z", "+00:00"))
    ws = open_workspace(str(fleet.path))
    with pytest.raises(RefusedError, match="for 30m of the 2h that 'beta' requires; 1h30m left"):
        check(plan_promotion(
            ws, source="alpha", target="beta", now=applied_at + timedelta(minutes=30)))
    r = fleet.cli("promote", "alpha", "beta", "--force")
    assert r.code == 0, r.err
    assert "Clmgit-Override: force" in last_message(fleet) and "soaked" in last_message(fleet)


def test_freeze_refuses_even_with_force_until_ignored(fleet: Fleet) -> None:
    records = applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c3)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha").code == 0
    assert fleet.cli("freeze", "beta", "--reason", "Black Friday").code == 0
    assert "freeze(beta): Black Friday" in last_message(fleet)
    r = fleet.cli("promote", "alpha", "beta", "--force")
    assert r.code == 1 and "frozen: Black Friday" in r.err
    r = fleet.cli("promote", "alpha", "beta", "--ignore-freeze")
    assert r.code == 0, r.err
    assert "Clmgit-Override: ignore-freeze" in last_message(fleet)
    assert fleet.cli("unfreeze", "beta").code == 0
    assert yaml.safe_load(fleet.file("channels/beta.yaml"))["frozen"] is False


def test_dry_run_writes_nothing(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    head, alpha = fleet.branch("main"), fleet.file("channels/alpha.yaml")
    r = fleet.cli("promote", "dev", "alpha", "--dry-run")
    assert r.code == 0 and "dry run" in r.out and "would promote alpha/default" in r.out
    assert fleet.branch("main") == head and fleet.file("channels/alpha.yaml") == alpha
    assert fleet.branch("alpha") == fleet.c1


def test_push_lands_control_and_channel_branch_atomically(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    fleet.builder.git("push", "--quiet", "origin", "main")
    r = fleet.cli("promote", "dev", "alpha", "--push")
    assert r.code == 0, r.err
    remote = dict(
        ln.split("\t")[::-1] for ln in fleet.builder.git("ls-remote", "origin").splitlines()
    )
    assert remote["refs/heads/main"] == fleet.branch("main")
    assert remote["refs/heads/alpha"] == fleet.c3


def test_push_from_a_branch_diverged_from_origin_is_refused(fleet: Fleet, tmp_path) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "--quiet", str(fleet.origin), str(other)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(other),
            "-c",
            "user.name=x",
            "-c",
            "user.email=x@y",
            "commit",
            "--quiet",
            "--allow-empty",
            "-m",
            "someone else",
        ],
        check=True,
    )
    subprocess.run(["git", "-C", str(other), "push", "--quiet", "origin", "main"], check=True)
    main, alpha, text = (
        fleet.branch("main"),
        fleet.branch("alpha"),
        fleet.file("channels/alpha.yaml"),
    )
    r = fleet.cli("promote", "dev", "alpha", "--push")
    assert r.code == 1 and "branch 'main' has diverged from origin/main" in r.err
    assert "git pull --rebase origin main" in r.err
    assert fleet.branch("main") == main and fleet.branch("alpha") == alpha
    assert fleet.file("channels/alpha.yaml") == text


def test_dirty_control_checkout_is_refused(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    (fleet.path / "channels/alpha.yaml").write_text(
        "# my local edit\n" + fleet.file("channels/alpha.yaml")
    )
    head = fleet.branch("main")
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 1 and "uncommitted changes" in r.err
    assert fleet.branch("main") == head
    assert fleet.file("channels/alpha.yaml").startswith("# my local edit")


def test_rollback_goes_to_previous_pin_and_says_so(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2).code == 0
    assert fleet.cli("promote", "dev", "alpha").code == 0
    r = fleet.cli("rollback", "alpha")
    assert r.code == 0, r.err
    assert pins(fleet, "alpha") == {"default": fleet.c2}
    message = last_message(fleet)
    assert message.startswith(f"rollback(alpha): {fleet.c3[:7]}..{fleet.c2[:7]} [default]")
    assert "Clmgit-Action: rollback" in message and f"default={fleet.c3}" in message
    # back by a commit on top of c3 (a promotion merge with c2's tree), not by rewriting alpha
    assert fleet.builder.git("log", "-1", "--format=%P", "alpha").split() == [fleet.c3, fleet.c2]
    assert tree(fleet, "alpha") == tree(fleet, fleet.c2)
    r = fleet.cli("rollback", "alpha")  # c3 is ahead of c2, so there is nothing further back
    assert r.code == 1 and "no earlier pin" in r.err


def test_sync_branches_moves_converged_channels(fleet: Fleet) -> None:
    records = applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c3)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha").code == 0
    fleet.builder.git("update-ref", "refs/heads/alpha", fleet.c1)
    r = fleet.cli("sync-branches", "--dry-run")
    assert r.code == 0 and "would move alpha" in r.out and fleet.branch("alpha") == fleet.c1
    assert fleet.cli("sync-branches").code == 0
    assert fleet.branch("alpha") == fleet.c3
    assert "every channel branch" in fleet.cli("sync-branches").out
