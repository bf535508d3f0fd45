"""The reconcile protocol (docs/explanation/reconcile.md) with the real file registry and a fake
engine."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from clmgit.engine.clock import SystemClock
from clmgit.errors import ConfigError
from clmgit.model import MAX_PROBLEMS, Cluster, ClusterStatus, Problem, desired_version
from clmgit.reconcile.plan import (
    BLOCKED,
    CREATE,
    DECOMMISSION,
    IN_SYNC,
    UPDATE,
    assign_shards,
    parse_shard,
    plan,
    select,
)
from clmgit.reconcile.run import Reconciler
from clmgit.registry.file import clusters_yaml
from tests.helpers.reconcile import (
    OLD,
    SHA,
    FakeEngine,
    FakeReport,
    make_registry,
    pin,
    record,
    run,
)


def in_sync_record(name: str) -> dict:
    r = record(name)
    from clmgit.model import parse_cluster

    r["status"] = {"current_version": desired_version(SHA, parse_cluster(r, "x")),
                   "last_version": "", "next_version": "", "problems": []}
    return r


def test_a_cluster_at_its_version_costs_no_engine_call_and_no_write(tmp_path):
    reg = make_registry(tmp_path, [in_sync_record("a")])
    before = reg.path.read_bytes()
    engine = FakeEngine()
    [result] = run(reg, engine)
    assert (result.action, result.outcome) == (IN_SYNC, "in-sync")
    assert engine.calls == []
    assert reg.path.read_bytes() == before
    assert not (tmp_path / ".clusters.yaml.leases").exists()


def test_an_update_records_current_last_and_clears_next_and_problems(tmp_path):
    r = record("a")
    r["status"] = {"current_version": f"{OLD}#x", "problems": [{"type": "t", "title": "old"}]}
    reg = make_registry(tmp_path, [r])
    engine = FakeEngine()
    [result] = run(reg, engine)
    assert result.outcome == "applied" and result.changes == (f"applied {SHA[:7]}",)
    [c] = reg.clusters()
    assert c.status.current_version == desired_version(SHA, c)
    assert c.status.last_version == f"{OLD}#x"
    assert (c.status.next_version, c.status.problems) == ("", ())
    assert c.status.applied_at.endswith("Z")
    assert engine.calls == [("apply", c.id, False)]
    # And now it is in sync.
    assert run(reg, engine)[0].outcome == "in-sync"
    assert len(engine.calls) == 1


def test_a_requested_cluster_ends_ready_with_the_hash_of_its_ready_self(tmp_path):
    reg = make_registry(tmp_path, [record("a", lifecycle_status="requested")])
    [result] = run(reg, FakeEngine())
    assert result.action == CREATE
    [c] = reg.clusters()
    assert c.lifecycle_status == "ready"
    assert plan(c, pin).action == IN_SYNC


def test_next_version_is_written_before_the_engine_runs(tmp_path):
    reg = make_registry(tmp_path, [record("a", lifecycle_status="requested")])
    seen: list[ClusterStatus] = []

    class Peeking(FakeEngine):
        def apply(self, cluster, sha, *, dry_run=False):
            [now] = reg.clusters()
            seen.append(now.status)
            # CLM knows no `creating`: the record says `requested` until the cluster exists.
            assert now.lifecycle_status == "requested"
            return super().apply(cluster, sha, dry_run=dry_run)

    run(reg, Peeking())
    [c] = reg.clusters()
    assert seen[0].next_version == c.status.current_version != ""


def test_a_failing_cluster_records_a_problem_keeps_next_version_and_others_go_on(tmp_path):
    reg = make_registry(tmp_path, [record("a"), record("b")])
    engine = FakeEngine(fail={"aws:123456789012:eu-central-1:a": "stack a failed: no"})
    results = run(reg, engine)
    assert [r.outcome for r in results] == ["failed", "applied"]
    assert results[0].detail == "stack a failed: no"
    a, b = reg.clusters()
    assert a.status.problems == (Problem("clmgit/apply", "stack a failed: no",
                                         "stack a failed: no"),)
    assert a.status.next_version and not a.status.current_version
    assert b.status.current_version


def test_problems_are_capped_as_clm_caps_them(tmp_path):
    """CLM keeps the newest 25 and puts its "<multiple problems>" entry in the first place;
    every field of the problems kept survives the write-back."""
    r = record("a")
    r["status"] = {"problems": [
        {"type": "t", "title": f"p{i}", "detail": f"d{i}", "status": 500 + i,
         "instance": f"/i/{i}"} for i in range(MAX_PROBLEMS)]}
    reg = make_registry(tmp_path, [r])
    engine = FakeEngine(fail={"aws:123456789012:eu-central-1:a": "again"})
    run(reg, engine)
    run(reg, engine)  # the same problem twice in a row is kept once, as CLM compacts it
    problems = reg.clusters()[0].status.problems
    assert len(problems) == MAX_PROBLEMS
    assert problems[0] == Problem(
        "https://cluster-lifecycle-manager.zalando.org/problems/too-many-problems",
        "<multiple problems>")
    assert problems[1] == Problem("t", "p2", "d2", 502, "/i/2")
    assert [p.title for p in problems[-2:]] == ["p24", "again"]


def test_a_dry_run_takes_no_lease_and_writes_nothing(tmp_path):
    reg = make_registry(tmp_path, [record("a"), record("b", lifecycle_status="requested")])
    before = reg.path.read_bytes()
    engine = FakeEngine()
    results = run(reg, engine, dry_run=True)
    assert [r.outcome for r in results] == ["planned", "planned"]
    assert all(dry for _, _, dry in engine.calls)
    assert reg.path.read_bytes() == before
    assert not (tmp_path / ".clusters.yaml.leases").exists()


def test_a_cluster_leased_by_another_run_is_skipped(tmp_path):
    reg = make_registry(tmp_path, [record("a")])
    reg.acquire("aws:123456789012:eu-central-1:a", "elsewhere/1/x", 600)
    engine = FakeEngine()
    [result] = run(reg, engine)
    assert (result.outcome, result.detail) == ("skipped", "another reconciler holds its lease")
    assert engine.calls == []


def test_update_block_and_missing_pins_block_the_cluster(tmp_path):
    blocked = record("a")
    blocked["config_items"] = {"cluster_update_block": "incident 42"}
    reg = make_registry(tmp_path, [blocked, record("b", channel="nowhere")])
    engine = FakeEngine()
    results = run(reg, engine)
    assert [(r.action, r.outcome) for r in results] == [(BLOCKED, "skipped")] * 2
    assert results[0].detail == "cluster_update_block is set: incident 42"
    assert results[1].detail == "unknown channel"
    assert engine.calls == []


def test_decommission_requested_runs_the_decommission_and_ends_decommissioned(tmp_path):
    r = record("a", lifecycle_status="decommission-requested")
    r["status"] = {"current_version": f"{OLD}#x"}
    reg = make_registry(tmp_path, [r])
    engine = FakeEngine()
    [result] = run(reg, engine)
    assert (result.action, result.outcome) == (DECOMMISSION, "applied")
    [c] = reg.clusters()
    assert c.lifecycle_status == "decommissioned"
    assert c.status.current_version == f"{OLD}#x"
    assert select([c]) == []


def test_a_changed_config_item_alone_makes_a_cluster_pending(tmp_path):
    r = in_sync_record("a")
    reg = make_registry(tmp_path, [r])
    assert plan(reg.clusters()[0], pin).action == IN_SYNC
    r["config_items"] = {"log_level": "debug"}
    reg = make_registry(tmp_path, [r])
    assert plan(reg.clusters()[0], pin).action == UPDATE


# --- selection ---------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 16])
def test_shards_partition_the_fleet_evenly_and_stably(count):
    ids = [f"aws:1:eu-central-1:c{i}" for i in range(200)]
    shards = assign_shards(ids, count)
    members = [[i for i in ids if shards[i] == k] for k in range(count)]
    assert sorted(sum(members, [])) == sorted(ids)
    assert max(map(len, members)) == -(-len(ids) // count)  # never more than ceil(M/N)
    assert assign_shards(reversed(ids), count) == shards  # the order read does not matter
    # A cluster that comes or goes moves few others (a re-hash of all would move most).
    grown = assign_shards([*ids, "aws:1:eu-central-1:new"], count)
    shrunk = assign_shards(ids[1:], count)
    assert sum(grown[i] != shards[i] for i in ids) <= 8
    assert sum(shrunk[i] != shards[i] for i in ids[1:]) <= 8


def test_shards_are_the_same_on_every_machine():
    assert assign_shards([f"c{i}" for i in range(6)], 3) == {
        "c0": 1, "c1": 2, "c2": 2, "c3": 0, "c4": 0, "c5": 1}


@pytest.mark.parametrize("spec", ["4/4", "-1/2", "a/b", "1", "0/0"])
def test_a_bad_shard_is_refused(spec):
    with pytest.raises(ConfigError, match="expected I/N"):
        parse_shard(spec)


def test_selection_by_name_channel_and_an_unknown_name(tmp_path):
    reg = make_registry(tmp_path, [record("a"), record("b", "beta", alias="bee")])
    clusters = reg.clusters()
    assert [c.alias for c in select(clusters, names=["bee"])] == ["bee"]
    assert [c.alias for c in select(clusters, channel="dev")] == ["a"]
    with pytest.raises(ConfigError, match="no cluster 'zzz'"):
        select(clusters, names=["zzz"])


def test_a_cluster_another_run_finished_after_the_plan_is_not_applied_again(tmp_path):
    reg = make_registry(tmp_path, [record("a")])
    [target] = [plan(c, pin) for c in reg.clusters()]
    other = Reconciler(reg, FakeEngine(), holder="host/1/other")
    assert other.run([target])[0].outcome == "applied"  # after our plan, before our lease
    engine = FakeEngine()
    [result] = Reconciler(reg, engine).run([target])
    assert result.outcome == "in-sync"
    assert engine.calls == []


def test_the_fresh_record_is_what_is_applied_and_hashed(tmp_path):
    reg = make_registry(tmp_path, [record("a")])
    [target] = [plan(c, pin) for c in reg.clusters()]
    changed = record("a")
    changed["config_items"] = {"log_level": "debug"}  # edited after the plan
    reg.path.write_text(clusters_yaml([changed]))
    Reconciler(reg, FakeEngine()).run([target])
    [c] = reg.clusters()
    assert c.status.current_version == desired_version(SHA, c) != target.version


@dataclass
class InterruptedEngine(FakeEngine):
    """The run is interrupted while the engine waits on its first cluster."""

    stop: threading.Event = field(default_factory=threading.Event)

    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> FakeReport:
        self.calls.append(("apply", cluster.id, dry_run))
        self.stop.set()
        SystemClock(stop=self.stop).sleep(60)
        raise AssertionError("the sleep went on after the stop")


def test_an_interrupted_run_gives_up_the_lease_keeps_next_version_and_starts_nothing(tmp_path):
    reg = make_registry(tmp_path, [record("a"), record("b")])
    engine = InterruptedEngine()
    targets = [plan(c, pin) for c in reg.clusters()]

    results = Reconciler(reg, engine, stop=engine.stop).run(targets, concurrency=1)

    assert [(r.outcome, r.detail) for r in results] == [
        ("stopped", "stopped: the run was interrupted"),
        ("skipped", "the run was interrupted")]
    assert [c[1] for c in engine.calls] == ["aws:123456789012:eu-central-1:a"]
    a, b = reg.clusters()
    assert a.status.next_version == results[0].version and a.status.problems == ()
    assert reg.acquire(a.id, "another/1/run", 60) is not None  # its lease was given up
    assert b.status.next_version == ""


def test_the_summary_shows_only_what_needs_a_person(tmp_path, capsys):
    """`reconcile --summary`: the failed clusters and the counts; the full view also lists
    every applied cluster and its changes."""
    from clmgit.cli import views
    from clmgit.cli.output import Format

    reg = make_registry(tmp_path, [record("a"), record("b"), in_sync_record("c")])
    results = run(reg, FakeEngine(fail={"aws:123456789012:eu-central-1:b": "stack b: boom"}))

    views.reconcile_results(results, fmt=Format.table, summary=True)
    short = capsys.readouterr().out.splitlines()
    views.reconcile_results(results, fmt=Format.table)
    full = capsys.readouterr().out.splitlines()

    assert short[0].split() == ["CLUSTER", "ACTION", "OUTCOME", "VERSION", "TIME", "DETAIL"]
    assert [ln.split()[0] for ln in short[1:-1]] == ["b"] and "stack b: boom" in short[1]
    assert short[-1] == full[-1] and "1 failed" in short[-1] and "1 in-sync" in short[-1]
    assert [ln.split()[0] for ln in full[1:3]] == ["a", "b"] and f"  a: applied {SHA[:7]}" in full
