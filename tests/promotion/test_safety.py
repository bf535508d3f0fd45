"""Issue 15 cases 1, 2, 5 and 8 through the real CLI, real git and a bare origin: channels move
only forward (by content), branches never lose content or get rewritten, gates never pass
vacuously, and a refused dry run shows its plan first."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.helpers.fleet import Fleet, default_records
from tests.helpers.promotion import applied, last_message, pins, tree

pytestmark = pytest.mark.slow


def origin_sha(fleet: Fleet, branch: str) -> str:
    return fleet.builder.git("--git-dir", str(fleet.origin), "rev-parse", branch)


def test_promote_into_a_branch_following_channel_is_forward_only_and_says_it_pins(
    fleet: Fleet,
) -> None:
    fleet.set_clusters(applied(default_records(), "alpha", fleet.c1))
    # dev follows its branch (at c3); alpha's branch is at c1, behind it
    r = fleet.cli("promote", "alpha", "dev", "--sha", fleet.c1, "--dry-run")
    assert r.code == 1
    assert "only moves forward" in r.err and "use rollback, or --force" in r.err
    assert fleet.c1[:7] in r.err and fleet.c3[:7] in r.err and "head of branch 'dev'" in r.err
    assert "follows branch 'dev' today; this promotion pins it" in r.out
    assert pins(fleet, "dev") == {} and fleet.branch("dev") == fleet.c3


def test_refused_dry_run_shows_the_plan_then_the_refusal(fleet: Fleet) -> None:
    head = fleet.branch("main")
    r = fleet.cli("promote", "dev", "alpha", "--dry-run")
    assert r.code == 1
    assert "would promote alpha/default from dev" in r.out and "the plan is refused" in r.out
    assert r.err.count("\n") == 1 and "have not applied" in r.err
    assert fleet.branch("main") == head


def test_applied_gate_with_no_source_clusters_refuses_and_force_is_recorded(
    fleet: Fleet,
) -> None:
    records = [r for r in default_records() if r["channel"] != "dev"]
    fleet.set_clusters(records)
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 1 and "the channel has none, so this gate cannot pass" in r.err
    r = fleet.cli("promote", "dev", "alpha", "--force")
    assert r.code == 0, r.err
    assert "Clmgit-Override: force" in last_message(fleet)
    assert "cannot pass" in last_message(fleet)


def test_status_reports_a_cluster_of_an_unknown_channel(fleet: Fleet) -> None:
    records = default_records()
    records[0]["channel"] = "nightly"
    fleet.set_clusters(records)
    r = fleet.cli("status")
    assert r.code == 0
    row = next(ln for ln in r.out.splitlines() if "dev-1" in ln)
    assert "blocked" in row and "unknown channel 'nightly'" in row


def test_hotfix_on_a_channel_branch_refuses_the_move_then_merges_with_force(
    fleet: Fleet,
) -> None:
    records = applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c2)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2, "--push").code == 0
    assert origin_sha(fleet, "alpha") == fleet.c2
    hotfix = fleet.builder.commit("alpha", {"cluster/hotfix.yaml": "x: 1\n"}, "Hotfix on alpha")
    fleet.builder.git("push", "-q", "origin", "alpha")
    main = fleet.branch("main")
    r = fleet.cli("promote", "dev", "alpha", "--push")
    assert r.code == 1
    assert hotfix[:7] in r.err and "'Hotfix on alpha'" in r.err and "cluster/hotfix.yaml" in r.err
    assert fleet.branch("main") == main and origin_sha(fleet, "alpha") == hotfix

    r = fleet.cli("promote", "dev", "alpha", "--push", "--force")
    assert r.code == 0, r.err
    assert "Clmgit-Override: force" in last_message(fleet) and "carries" in last_message(fleet)
    alpha = origin_sha(fleet, "alpha")
    assert fleet.builder.git("log", "-1", "--format=%P", alpha).split() == [hotfix, fleet.c3]
    assert tree(fleet, alpha) == tree(fleet, fleet.c3)  # merge, no force push: hotfix kept
    merge = fleet.builder.git("log", "-1", "--format=%B", alpha)
    assert "Clmgit-Override: force" in merge and "Hotfix on alpha" in merge


def test_branches_move_by_merge_after_a_promotion_merge_and_sync_uses_tree_equality(
    fleet: Fleet,
) -> None:
    records = applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c3)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2, "--push").code == 0
    # a merge commit on alpha (as kubernetes-on-aws has thousands of): same cluster/ as c2
    merged = fleet.builder.git("commit-tree", f"{fleet.c2}^{{tree}}", "-p", fleet.c2,
                               "-p", fleet.c1, "-m", "Merge dev into alpha")
    fleet.builder.git("update-ref", "refs/heads/alpha", merged)
    fleet.builder.git("push", "-q", "origin", "alpha")
    assert "every channel branch" in fleet.cli("sync-branches").out  # at its pin by content
    r = fleet.cli("promote", "dev", "alpha", "--push")
    assert r.code == 0, r.err
    assert "(promotion-merge)" in r.out
    alpha = origin_sha(fleet, "alpha")
    assert fleet.builder.git("log", "-1", "--format=%P", alpha).split() == [merged, fleet.c3]
    assert tree(fleet, alpha) == tree(fleet, fleet.c3)
    assert yaml.safe_load(fleet.file("channels/alpha.yaml"))["groups"][0]["sha"] == fleet.c3


def test_sync_branches_force_is_recorded_in_history_and_on_the_merge(fleet: Fleet) -> None:
    records = applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c2)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2).code == 0
    assert fleet.cli("freeze", "beta", "--reason", "later").code == 0  # history goes on after
    hotfix = fleet.builder.commit("alpha", {"cluster/hotfix.yaml": "x: 1\n"}, "Hotfix on alpha")
    r = fleet.cli("sync-branches")
    assert r.code == 1 and "Hotfix on alpha" in r.err and fleet.branch("alpha") == hotfix

    r = fleet.cli("sync-branches", "--force")
    assert r.code == 0, r.err
    assert f"moved alpha: {hotfix[:7]} -> {fleet.c2[:7]} (promotion-merge, forced)" in r.out
    record = last_message(fleet)
    assert record.startswith(f"sync(alpha): forced alpha {hotfix[:7]}..{fleet.c2[:7]}")
    assert "Clmgit-Override: force" in record and "cluster/hotfix.yaml" in record
    merge = last_message(fleet, "alpha")
    assert "Clmgit-Override: force" in merge and "Hotfix on alpha" in merge
    assert fleet.builder.git("status", "--porcelain", "--untracked-files=no") == ""

    entries = json.loads(fleet.cli("history", "alpha", "--output", "json").out)["items"]
    assert [(e["action"], e["overrides"]) for e in entries[:2]] == [
        ("sync", ["force"]), ("promote", [])]
    assert entries[0]["sha"] == fleet.c2 and entries[0]["channel"] == "alpha"
    everything = json.loads(fleet.cli("history", "--output", "json").out)["items"]
    assert [e["action"] for e in everything[:3]] == ["sync", "freeze", "promote"]
    assert "sync" not in [e["action"] for e in
                          json.loads(fleet.cli("history", "beta", "--output", "json").out)["items"]]
