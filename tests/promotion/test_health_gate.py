"""The healthy_in_source gate (docs/how-to/health-gate.md) on a real repo: verdicts read from the
registry at promote time, bound to the version and the apply, stable_for, deadlines, unknown
clusters, and what the commit records. Times are forced through `now` (the CLI cases use the wall
clock)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from clmgit.errors import RefusedError
from clmgit.healthstate import HEALTHY, UNHEALTHY, Observation, next_verdict
from clmgit.model import ClusterStatus, desired_version, health_to_dict, parse_cluster
from clmgit.promotion.promote import check, plan_promotion
from clmgit.timestamps import format_timestamp
from clmgit.workspace import open_workspace
from tests.helpers.fleet import Fleet, default_records

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
CRASH = ("Deployment platform/echo: pod platform/echo-7f9c2 container echo CrashLoopBackOff "
         "(5 restarts)")
GATE = "  healthy_in_source: {stable_for: 10m, progress_deadline: 30m, allow_unknown: %d}\n"


def minutes(n: float) -> datetime:
    return T0 + timedelta(minutes=n)


def with_gate(fleet: Fleet, allow_unknown: int = 0) -> None:
    text = fleet.file("channels/alpha.yaml").replace(
        "  applied_in_source: true\n", "  applied_in_source: true\n" + GATE % allow_unknown)
    fleet.builder.commit("main", {"channels/alpha.yaml": text}, "Gate alpha on health")


def set_dev(fleet: Fleet, *, applied: datetime, health: dict | None, sha: str | None = None,
            version_sha: str | None = None) -> None:
    """dev-1 runs `sha` (default c3) since `applied`, with this verdict in its status."""
    records = default_records()
    dev = records[0]
    cluster = parse_cluster(dev, "test")
    status: dict = {"current_version": desired_version(sha or fleet.c3, cluster),
                    "last_version": "", "next_version": "", "problems": [],
                    "applied_at": format_timestamp(applied)}
    if health is not None:
        health.setdefault("version", desired_version(version_sha or sha or fleet.c3, cluster))
        status["health"] = health
    dev["status"] = status
    fleet.set_clusters(records)


def verdict(state: str, observed: datetime, since: datetime | None = None,
            reasons: tuple[str, ...] = ()) -> dict:
    return {"state": state, "observed_at": format_timestamp(observed),
            "healthy_since": format_timestamp(since) if since else "", "reasons": list(reasons)}


def plan_at(fleet: Fleet, now: datetime, **kw):
    return plan_promotion(open_workspace(str(fleet.path)), source="dev", target="alpha",
                          now=now, **kw)


def refusal(fleet: Fleet, now: datetime) -> str:
    with pytest.raises(RefusedError) as e:
        check(plan_at(fleet, now))
    return str(e.value)


def test_a_crash_looping_source_blocks_then_passes_once_stable(fleet: Fleet) -> None:
    with_gate(fleet)
    now = datetime.now(UTC)
    set_dev(fleet, applied=now - timedelta(minutes=10),
            health=verdict(UNHEALTHY, now - timedelta(minutes=1), reasons=(CRASH,)))
    before = fleet.branch("main")
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 1 and r.err.count("\n") == 1 and "Traceback" not in r.err
    assert "dev-1 unhealthy" in r.err and CRASH in r.err and "--force overrides" in r.err
    assert fleet.branch("main") == before

    set_dev(fleet, applied=now - timedelta(minutes=30),
            health=verdict(HEALTHY, now - timedelta(minutes=1), now - timedelta(minutes=20)))
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 0, r.err
    message = fleet.builder.git("log", "-1", "--format=%B", "main")
    assert "Clmgit-Health: 1 healthy" in message
    assert f"- dev-1 @ {fleet.c3[:7]}: healthy for 19m since " in message


def test_stable_for_counts_from_healthy_since_to_the_last_observation(fleet: Fleet) -> None:
    with_gate(fleet)
    set_dev(fleet, applied=T0, health=verdict(HEALTHY, minutes(8), minutes(5)))
    assert "dev-1 healthy for 3m of 10m (last observed" in refusal(fleet, minutes(30))
    set_dev(fleet, applied=T0, health=verdict(HEALTHY, minutes(16), minutes(5)))
    assert check(plan_at(fleet, minutes(17))).changes


def test_a_verdict_observed_before_the_apply_is_ignored(fleet: Fleet) -> None:
    with_gate(fleet)
    set_dev(fleet, applied=minutes(20), health=verdict(HEALTHY, minutes(19), T0))
    text = refusal(fleet, minutes(25))
    assert "dev-1 pending" in text and "is older than its apply" in text


def test_an_older_versions_healthy_verdict_does_not_count_for_the_new_one(fleet: Fleet) -> None:
    """Version B applied while A's healthy verdict is in the registry: refused until B is
    observed healthy."""
    with_gate(fleet)
    set_dev(fleet, applied=minutes(20), version_sha=fleet.c2,
            health=verdict(HEALTHY, minutes(21), T0))
    assert f"its last verdict was for another version ({fleet.c2[:7]})" in refusal(
        fleet, minutes(40))
    set_dev(fleet, applied=minutes(20), health=verdict(HEALTHY, minutes(40), minutes(25)))
    assert check(plan_at(fleet, minutes(41))).changes


def test_past_the_progress_deadline_a_cluster_is_failed(fleet: Fleet) -> None:
    with_gate(fleet)
    set_dev(fleet, applied=T0, health=verdict("pending", minutes(5), reasons=(
        "Deployment platform/echo: 0 of 2 updated replicas are available",)))
    assert "dev-1 pending" in refusal(fleet, minutes(20))
    text = refusal(fleet, minutes(31))
    assert "dev-1 failed" in text and "progress deadline of 30m" in text
    set_dev(fleet, applied=T0, health=None)
    assert "dev-1 failed" in refusal(fleet, minutes(31))


def test_an_unknown_cluster_blocks_unless_allowed_and_is_named(fleet: Fleet) -> None:
    with_gate(fleet)
    set_dev(fleet, applied=T0, health=verdict("unknown", minutes(5), reasons=(
        "cannot read the nodes: no answer",)))
    text = refusal(fleet, minutes(60))
    assert "(1 unknown, 0 allowed)" in text and "dev-1 unknown: cannot read the nodes" in text
    text = fleet.file("channels/alpha.yaml").replace("allow_unknown: 0", "allow_unknown: 1")
    fleet.builder.commit("main", {"channels/alpha.yaml": text}, "Allow one unknown")
    plan = check(plan_at(fleet, minutes(60)))
    assert "Clmgit-Health: 1 unknown (allowed unknown: dev-1)" in plan.message


def test_flapping_health_restarts_stable_for(fleet: Fleet) -> None:
    with_gate(fleet)
    cluster = parse_cluster(default_records()[0], "test")
    status = ClusterStatus(current_version=desired_version(fleet.c3, cluster),
                           applied_at=format_timestamp(T0))
    for at, state in ((1, HEALTHY), (5, UNHEALTHY), (8, HEALTHY), (14, HEALTHY)):
        health = next_verdict(status, Observation(state, ("x",) if state != HEALTHY else ()),
                              deadline=timedelta(minutes=30), now=minutes(at))
        status = ClusterStatus(status.current_version, applied_at=status.applied_at,
                               health=health)
    assert status.health is not None and status.health.healthy_since == format_timestamp(
        minutes(8))
    set_dev(fleet, applied=T0, health=health_to_dict(status.health))
    assert "healthy for 6m of 10m" in refusal(fleet, minutes(15))


def test_force_overrides_the_gate_and_is_recorded(fleet: Fleet) -> None:
    with_gate(fleet)
    now = datetime.now(UTC)
    set_dev(fleet, applied=now - timedelta(minutes=5),
            health=verdict(UNHEALTHY, now, reasons=(CRASH,)))
    r = fleet.cli("promote", "dev", "alpha", "--force")
    assert r.code == 0, r.err
    message = fleet.builder.git("log", "-1", "--format=%B", "main")
    assert "Clmgit-Override: force" in message and CRASH in message
    assert "Clmgit-Health: 1 unhealthy" in message


def test_status_shows_the_health_column_and_json_carries_it(fleet: Fleet) -> None:
    with_gate(fleet)
    now = datetime.now(UTC)
    set_dev(fleet, applied=now - timedelta(minutes=5),
            health=verdict(UNHEALTHY, now, reasons=(CRASH,)))
    r = fleet.cli("status", "--channel", "dev")
    assert r.code == 0 and "unhealthy" in r.out and "CrashLoopBackOff" in r.out
    import json

    [row] = json.loads(fleet.cli("status", "--channel", "dev", "-o", "json").out)["items"]
    assert (row["health"], row["health_reason"]) == ("unhealthy", CRASH)



def test_status_counts_health_beside_the_states_and_filters_on_it(fleet: Fleet) -> None:
    """An in-sync cluster that crash-loops is not a fine fleet: the summary line says so, and
    `--health unhealthy` lists exactly such clusters."""
    import json

    now = datetime.now(UTC)
    set_dev(fleet, applied=now - timedelta(minutes=5),
            health=verdict(UNHEALTHY, now, reasons=(CRASH,)))
    r = fleet.cli("status")
    assert r.code == 0, r.err
    summary = r.out.strip().splitlines()[-1]
    assert summary.endswith("; health: 1 unhealthy"), summary
    only = fleet.cli("status", "--health", "unhealthy", "-o", "json")
    data = json.loads(only.out)
    assert [row["alias"] for row in data["items"]] == ["dev-1"]
    assert data["summary"]["health"] == {"unhealthy": 1}
    assert json.loads(fleet.cli("status", "--health", "healthy", "-o", "json").out)[
        "items"] == []
    typo = fleet.cli("status", "--health", "sick")
    assert typo.code == 1 and "no health state 'sick'" in typo.err


def test_status_refuses_a_selector_key_no_record_has(fleet: Fleet) -> None:
    """`-l regoin=eu-*` (a typo) is an error, not "0 clusters" and exit 0."""
    typo = fleet.cli("status", "-l", "regoin=eu-*")
    assert typo.code == 1 and typo.out == ""
    assert "a cluster has no field 'regoin'" in typo.err and "region" in typo.err
    assert len(typo.err.strip().splitlines()) == 1
    assert fleet.cli("status", "-l", "region=eu-*").code == 0
    assert fleet.cli("status", "-l", "config_items.team=a*").code == 0

CANARY_HEALTHY = """channel: beta
branch: beta
source: alpha
gates:
  groups_before: healthy   # the rest waits for the canary to run the commit healthy
  healthy_in_source: {stable_for: 10m}
groups:
  - name: canary
    selector: {alias: "*-canary"}
  - name: default
"""


def test_waves_the_rest_waits_until_the_canary_group_is_healthy(fleet: Fleet) -> None:
    """`groups_before: healthy`: `promote … --group default` after the canary is healthy."""
    fleet.builder.commit("main", {"channels/beta.yaml": CANARY_HEALTHY}, "Canary healthy first")
    now = datetime.now(UTC)
    records = default_records()
    for r in records:
        if r["channel"] in ("dev", "alpha", "beta"):
            cluster = parse_cluster(r, "test")
            healthy = verdict(HEALTHY, now - timedelta(minutes=1), now - timedelta(minutes=50))
            healthy["version"] = desired_version(fleet.c3, cluster)
            r["status"] = {"current_version": desired_version(fleet.c3, cluster),
                           "applied_at": format_timestamp(now - timedelta(hours=1)),
                           "health": healthy}
    canary = records[2]
    canary["status"]["health"] = verdict(UNHEALTHY, now - timedelta(minutes=1),
                                         reasons=(CRASH,))
    canary["status"]["health"]["version"] = canary["status"]["current_version"]
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha").code == 0
    assert fleet.cli("promote", "alpha", "beta", "--group", "canary").code == 0
    rest = fleet.cli("promote", "alpha", "beta", "--group", "default")
    assert rest.code == 1
    assert f"run {fleet.c3[:7]} healthy" in rest.err and "beta-canary failed" in rest.err

    canary["status"]["health"] = verdict(HEALTHY, now - timedelta(minutes=1),
                                         now - timedelta(minutes=30))
    canary["status"]["health"]["version"] = canary["status"]["current_version"]
    fleet.set_clusters(records)
    rest = fleet.cli("promote", "alpha", "beta", "--group", "default")
    assert rest.code == 0, rest.err
