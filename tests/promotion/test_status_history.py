"""`status` (pinned vs applied, per cluster) and `history` (the log of channels/)."""

from __future__ import annotations

import json

from clmgit.registry.file import clusters_yaml
from tests.helpers.fleet import Fleet, default_records
from tests.helpers.promotion import applied


def by_id(fleet: Fleet) -> dict[str, dict]:
    r = fleet.cli("status", "--output", "json")
    assert r.code == 0, r.err
    return {s["id"].rsplit(":", 1)[1]: s for s in json.loads(r.out)["items"]}


def test_status_json_states(fleet: Fleet) -> None:
    records = applied(default_records(), "dev", fleet.c3)
    records[3]["config_items"] = {"cluster_update_block": "migrating etcd"}
    records[4]["status"] = {
        "current_version": "",
        "next_version": "x#y",
        "problems": [],
        "last_version": "",
    }
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha").code == 0
    assert fleet.cli("promote", "alpha", "beta", "--group", "canary", "--force").code == 0
    states = by_id(fleet)
    assert set(states["dev-1"]) == {
        "id",
        "alias",
        "environment",
        "channel",
        "group",
        "lifecycle",
        "pinned_sha",
        "applied_sha",
        "state",
        "reason",
        "health",
        "health_since",
        "health_reason",
    }
    assert states["dev-1"]["state"] == "in-sync"
    assert states["dev-1"]["pinned_sha"] == states["dev-1"]["applied_sha"] == fleet.c3
    assert states["alpha-1"]["state"] == "pending" and states["alpha-1"]["group"] == "default"
    assert states["beta-canary"]["group"] == "canary"
    assert states["beta-canary"]["pinned_sha"] == fleet.c3
    assert states["beta-1"]["state"] == "blocked"
    assert "migrating etcd" in states["beta-1"]["reason"]
    assert states["prod-1"]["state"] == "blocked"  # stable has no pin yet
    records[4]["channel"] = "dev"
    fleet.set_clusters(records)
    assert by_id(fleet)["prod-1"]["state"] == "updating"


def test_status_failed_and_table(fleet: Fleet) -> None:
    records = default_records()
    records[0]["status"]["problems"] = [{"type": "stack", "title": "stack failed", "detail": ""}]
    fleet.set_clusters(records)
    assert by_id(fleet)["dev-1"]["state"] == "failed"
    r = fleet.cli("status", "--channel", "dev")
    assert r.code == 0
    lines = r.out.splitlines()
    assert lines[0].split() == [
        "id",
        "alias",
        "environment",
        "channel",
        "group",
        "lifecycle",
        "pinned",
        "applied",
        "state",
        "health",
    ]
    assert len(lines) == 3 and "failed (stack failed)" in lines[1]
    assert lines[2] == "1 cluster: 1 failed"


def test_status_shows_a_requested_decommission(fleet: Fleet) -> None:
    """The most destructive pending action is never shown as a plain `pending`."""
    records = applied(default_records(), "dev", fleet.c3)
    records[0]["lifecycle_status"] = "decommission-requested"
    fleet.set_clusters(records)
    state = by_id(fleet)["dev-1"]
    assert state["lifecycle"] == "decommission-requested"
    assert state["state"] == "decommission"
    r = fleet.cli("status", "--state", "decommission")
    assert r.code == 0, r.err
    [row] = [ln for ln in r.out.splitlines() if "dev-1" in ln]
    assert "decommission-requested" in row and "deletes its stacks" in row
    assert r.out.splitlines()[-1] == "1 cluster: 1 decommission; health: 1 failed"


def test_status_filters_sort_and_frozen_channels(fleet: Fleet) -> None:
    records = applied(default_records(), "dev", fleet.c3)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha").code == 0
    assert fleet.cli("promote", "alpha", "beta", "--group", "canary", "--force").code == 0
    assert fleet.cli("freeze", "stable", "--reason", "peak season").code == 0

    canary = fleet.cli("status", "--group", "canary", "-o", "json")
    assert [s["alias"] for s in json.loads(canary.out)["items"]] == ["beta-canary"]
    prod = fleet.cli("status", "-l", "environment=production", "-o", "json")
    assert {s["environment"] for s in json.loads(prod.out)["items"]} == {"production"}
    in_sync = json.loads(fleet.cli("status", "--state", "in-sync", "-o", "json").out)["items"]
    assert in_sync and {s["state"] for s in in_sync} == {"in-sync"}

    table = fleet.cli("status", "--sort-by", "alias")
    aliases = [ln.split()[1] for ln in table.out.splitlines()[1:] if ln.startswith("aws:")]
    assert aliases == sorted(aliases) and len(aliases) == len(records)
    assert "channel stable is frozen: peak season" in table.out.splitlines()

    for bad in (["--group", "nope"], ["--state", "green"], ["-l", "environment"],
                ["--sort-by", "colour"], ["--channel", "gamma"]):
        refused = fleet.cli("status", *bad)
        assert refused.code == 1, bad
        assert len(refused.err.strip().splitlines()) == 1 and not refused.out, bad


def test_status_by_group(fleet: Fleet) -> None:
    """A row per channel group: its pin, its clusters' states, its freeze, and what a
    promotion from its source would do now (the planner's own verdict)."""
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha").code == 0
    assert fleet.cli("freeze", "stable", "--reason", "peak season").code == 0
    r = fleet.cli("status", "--by", "group", "-o", "json")
    assert r.code == 0, r.err
    rows = {(g["channel"], g["group"]): g for g in json.loads(r.out)["items"]}
    alpha = rows[("alpha", "default")]
    assert alpha["pinned_sha"] == fleet.c3 and alpha["gate"] == "up to date"
    assert alpha["clusters"] == 1 and alpha["states"] == {"pending": 1}
    canary = rows[("beta", "canary")]
    assert canary["next_sha"] == fleet.c3 and canary["clusters"] == 1
    assert canary["states"] == {"blocked": 1}  # its group has no pin yet
    assert canary["gate"] == "refused"
    assert any("have not applied" in why and "alpha-1" in why for why in canary["refusals"])
    stable = rows[("stable", "default")]
    assert stable["frozen"] is True and stable["freeze_reason"] == "peak season"
    assert any("frozen" in why for why in stable["refusals"])
    assert rows[("dev", "default")]["gate"] == "no source"
    table = fleet.cli("status", "--by", "group", "--channel", "beta")
    assert table.code == 0
    assert table.out.splitlines()[0].split()[:4] == ["channel", "group", "pin", "clusters"]
    assert {ln.split()[0] for ln in table.out.splitlines()[1:]} == {"beta"}
    assert "refused: 1 of 1 clusters of 'alpha' have not applied" in table.out


def test_history_newest_first(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2).code == 0
    assert fleet.cli("promote", "dev", "alpha").code == 0
    assert fleet.cli("freeze", "alpha", "--reason", "incident").code == 0
    r = fleet.cli("history", "alpha", "--output", "json")
    assert r.code == 0
    entries = json.loads(r.out)["items"]
    assert [e["action"] for e in entries[:3]] == ["freeze", "promote", "promote"]
    assert entries[1]["sha"] == fleet.c3 and entries[2]["sha"] == fleet.c2
    assert entries[1]["source"] == "dev" and entries[1]["groups"] == ["default"]
    table = fleet.cli("history").out
    assert "freeze(alpha): incident" in table.splitlines()[1]


def test_history_marks_overrides_counts_clusters_and_filters_groups(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha").code == 0
    forced = fleet.cli("promote", "alpha", "beta", "--group", "canary", "--force")
    assert forced.code == 0, forced.err
    assert f"-> {fleet.c3[:7]} (1 cluster)" in forced.out  # the plan says what it moves

    entries = json.loads(fleet.cli("history", "--group", "canary", "-o", "json").out)["items"]
    assert [(e["channel"], e["clusters"], e["overrides"]) for e in entries] == [
        ("beta", 1, ["force"])]
    table = fleet.cli("history", "--channel", "beta").out.splitlines()
    assert table[0].split()[:6] == ["date", "(UTC)", "author", "commit", "clusters", "override"]
    assert "! force" in table[1] and "promote(beta)" in table[1]
    alpha = fleet.cli("history", "alpha").out.splitlines()
    assert "!" not in alpha[1] and "promote(alpha)" in alpha[1]

    assert fleet.cli("history", "--group", "nope").code == 1
    assert fleet.cli("history", "alpha", "--channel", "beta").code == 1


def test_history_dates_are_utc() -> None:
    from clmgit.cli.views import _utc

    assert _utc("2026-11-24T15:30:00+01:00") == "2026-11-24 14:30"


def test_diff_shows_commits_per_group(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2).code == 0
    r = fleet.cli("diff", "dev", "alpha")
    assert r.code == 0, r.err
    assert f"default: {fleet.c2[:7]}..{fleet.c3[:7]}, 1 commit(s) to cluster/" in r.out
    assert "Raise the version to 3" in r.out and "Docs only" not in r.out
    r = fleet.cli("diff", "dev", "alpha", "--cluster", "alpha-1", "--output", "json")
    assert json.loads(r.out)["items"][0]["group"] == "default"


def test_registry_edits_are_seen_through_the_parse_cache(fleet: Fleet) -> None:
    assert by_id(fleet)["dev-1"]["state"] == "pending"
    records = applied(default_records(), "dev", fleet.c3)
    (fleet.path / "clusters.yaml").write_text(clusters_yaml(records))
    assert by_id(fleet)["dev-1"]["state"] == "in-sync"


def test_repo_given_as_git_url_is_mirrored(fleet: Fleet) -> None:
    from tests.helpers.cli import run_cli
    fleet.builder.git("push", "--quiet", "origin", "main")
    url = f"file://{fleet.origin}"
    r = run_cli(
        "--repo", url, "--registry", str(fleet.path / "clusters.yaml"), "status", "--output", "json"
    )
    assert r.code == 0, r.err
    assert len(json.loads(r.out)["items"]) == 5
    r = run_cli("--repo", url, "history")
    assert "Add channels and clusters" in r.out


def test_a_status_row_is_the_dataclass_its_fields_make(fleet: Fleet) -> None:
    """Rows are built from their fields' dict (fast at 10,000 clusters): every field is set,
    in the dataclass's order, and a row equals the one its __init__ would make."""
    from dataclasses import fields

    from clmgit.promotion.status import ClusterState, fleet_status
    from clmgit.workspace import open_workspace

    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    rows = fleet_status(open_workspace(str(fleet.path)))
    assert rows
    for row in rows:
        assert list(vars(row)) == [f.name for f in fields(ClusterState)]
        assert row == ClusterState(**vars(row))
