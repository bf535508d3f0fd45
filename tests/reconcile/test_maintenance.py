"""Maintenance windows (clmgit/reconcile/maintenance.py): which clusters wait, and a rolling update
that pauses between waves when its window closes and resumes in the next one, on the engine's
fakes with a clock that moves only as the test says."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record, example_channels
from clmgit_sandbox.configtree import cluster_tree
from clmgit_sandbox.doubles import FakeClock, FakeKube, FakeNodePools
from clmgit_sandbox.memorycloud import memory_backends

from clmgit.channels import parse_channel
from clmgit.engine.rolling import WindowClosed, roll_node_pool
from clmgit.model import Cluster, NodePool, parse_cluster
from clmgit.reconcile.maintenance import MaintenanceWindows
from clmgit.reconcile.plan import BLOCKED, CREATE, UPDATE, WAITING, Target
from clmgit.reconcile.session import Options, reconcile
from clmgit.registry.file import clusters_yaml
from clmgit.workspace import open_workspace
from tests.helpers.nodes import GROUP, sync
from tests.helpers.reconcile import FakeEngine, FakeReport, make_registry, record, run

STABLE = """\
branch: stable
groups:
  - name: night
    selector: {alias: "night-*"}
    maintenance_window: "Mon-Fri 01:00-04:00 America/New_York"
  - name: default
"""
MONDAY_NOON = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def cluster(alias: str, **items: str) -> Cluster:
    return Cluster(id=f"aws:1:eu-central-1:{alias}", alias=alias, local_id=alias,
                   channel="stable", config_items=items)


def windows(when: datetime, *, ignore: bool = False) -> MaintenanceWindows:
    channels = {"stable": parse_channel("stable", STABLE, "channels/stable.yaml")}
    return MaintenanceWindows(channels, ignore=ignore, now=lambda: when)


def held(target: Target, when: datetime = MONDAY_NOON, **kw: Any) -> Target:
    return windows(when, **kw).hold(target)


def test_an_update_outside_its_window_waits_with_the_next_opening() -> None:
    own = cluster("a", maintenance_window="Sat-Sun 02:00-05:00 Europe/Berlin")
    t = held(Target(own, UPDATE, "s", "v"))
    assert t.action == WAITING and t.version == "v"
    assert t.reason == ("outside its maintenance window (allow Sat-Sun 02:00-05:00 "
                        "(Europe/Berlin)), closed until 2026-12-05T02:00+01:00")
    # the group's window when the record names none
    t = held(Target(cluster("night-1"), UPDATE, "s", "v"))
    assert t.action == WAITING and t.reason.endswith("closed until 2026-12-01T01:00-05:00")
    assert held(Target(cluster("other"), UPDATE, "s", "v")).action == UPDATE  # no window
    inside = datetime(2026, 12, 5, 1, 30, tzinfo=UTC)  # 02:30 in Berlin
    assert held(Target(own, UPDATE, "s", "v"), inside).action == UPDATE


def test_creates_are_not_held_ignore_starts_it_and_a_bad_item_blocks_one_cluster() -> None:
    own = cluster("a", maintenance_window="Sat 02:00-05:00")
    assert held(Target(own, CREATE, "s", "v")).action == CREATE
    t = held(Target(own, UPDATE, "s", "v"), ignore=True)
    assert t.action == UPDATE and t.reason.endswith("by --ignore-window")
    bad = held(Target(cluster("b", maintenance_window="Sat 2-5"), UPDATE, "s", "v"))
    assert bad.action == BLOCKED
    assert bad.reason.startswith("cluster b: config item maintenance_window: 'Sat 2-5'")


def test_a_rolling_update_pauses_between_waves_and_resumes_in_the_next_window() -> None:
    record = Cluster(id="c", local_id="c", alias="c", channel="stable",
                     config_items={"maintenance_window": "Sat 02:00-03:00"},
                     node_pools=(NodePool("p", "w", max_size=8,
                                          config_items={"rolling_update_surge": "2"}),))
    kube, pools = FakeKube(), FakeNodePools()
    pools.add_group(record, "p", GROUP)
    sync(kube, pools)
    pools.roll("asg", version="2")
    clock = FakeClock(datetime(2026, 12, 5, 2, 50, tzinfo=UTC),
                      on_sleep=lambda _: sync(kube, pools))
    terminate = pools.terminate_instance

    def slow_terminate(instance_id: str, *, decrement_capacity: bool) -> None:
        terminate(instance_id, decrement_capacity=decrement_capacity)
        clock.advance(360)  # each node takes six minutes: the first wave ends at 03:02

    pools.terminate_instance = slow_terminate  # type: ignore[method-assign] # a slow cloud
    gate = windows(clock.now())

    def before_wave() -> None:
        gate.between_waves(record, clock.now())

    with pytest.raises(WindowClosed, match="closed until 2026-12-12T02:00"):
        roll_node_pool(kube, pools, record, "p", clock=clock, before_wave=before_wave)
    state = pools.pool_state(record, "p")
    assert len(state.outdated) == 2  # one wave of two went; the other two wait
    clock.advance(7 * 24 * 3600 - 3600)  # the next Saturday, 02:02
    sync(kube, pools)
    result = roll_node_pool(kube, pools, record, "p", clock=clock, before_wave=before_wave)
    assert len(result.replaced) == 2 and result.waves == 1
    assert not pools.pool_state(record, "p").outdated
    assert pools.groups["asg"][1].desired_capacity == 4


class ClosingEngine(FakeEngine):
    """Applies as the fake does, but its update finds the window closed before a wave."""

    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> FakeReport:
        super().apply(cluster, sha, dry_run=dry_run)
        raise WindowClosed("paused between waves: its maintenance window closed, closed "
                           "until 2026-12-12T02:00+00:00; the next run resumes the update")


def test_a_paused_update_is_waiting_keeps_next_version_and_resumes(tmp_path) -> None:
    reg = make_registry(tmp_path, [record("a")])
    [result] = run(reg, ClosingEngine())
    assert result.outcome == WAITING and "paused between waves" in result.detail
    [paused] = reg.clusters()
    assert paused.status.next_version == result.version  # what the next run resumes
    assert paused.status.problems == () and paused.status.current_version == ""
    [again] = run(reg, FakeEngine())
    assert again.outcome == "applied"
    [done] = reg.clusters()
    assert (done.status.current_version, done.status.next_version) == (result.version, "")


def test_reconcile_pauses_an_update_at_the_window_end_and_the_next_run_resumes_it(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`reconcile` with the real engine over the in-memory cloud: four outdated nodes, surge 2,
    six minutes a node; the window closes after the first wave."""
    b = ConfigRepoBuilder(tmp_path / "config")
    v1 = b.commit("dev", cluster_tree(1), "Config version 1")
    for channel in ("alpha", "beta", "stable"):
        b.git("branch", channel, v1)
    rec = cluster_record("aws:123456789012:eu-central-1:night", channel="dev", alias="night",
                         lifecycle_status="ready")
    rec["config_items"] = {"maintenance_window": "Sat 02:00-03:00", "drain_poll_interval": "1s"}
    rec["node_pools"][0].update(max_size=8, config_items={"rolling_update_surge": "2"})
    b.commit("main", {**example_channels(), "clusters.yaml": clusters_yaml([rec])}, "Clusters")
    cloud = memory_backends(parse_cluster(rec, "test"))
    kube, pools = cloud.kube, cloud.pools
    assert isinstance(kube, FakeKube) and isinstance(pools, FakeNodePools)
    pools.add_group(parse_cluster(rec, "test"), "default-worker", GROUP)
    sync(kube, pools)
    pools.roll("asg", version="2")
    clock = FakeClock(datetime(2026, 12, 5, 2, 50, tzinfo=UTC),
                      on_sleep=lambda _: sync(kube, pools))
    terminate = pools.terminate_instance

    def slow_terminate(instance_id: str, *, decrement_capacity: bool) -> None:
        terminate(instance_id, decrement_capacity=decrement_capacity)
        clock.advance(360)

    pools.terminate_instance = slow_terminate  # type: ignore[method-assign] # a slow cloud

    def run() -> Any:
        monkeypatch.setenv("CLMGIT_NOW", clock.now().isoformat())
        options = Options(backends=lambda cluster: cloud, clock=clock, processes=1)
        [result] = reconcile(open_workspace(str(b.path)), options)
        [record] = open_workspace(str(b.path)).clusters
        return result, record

    paused, record = run()
    assert paused.outcome == WAITING and "paused between waves" in paused.detail
    assert record.status.next_version == paused.version and not record.status.problems
    assert len(pools.pool_state(record, "default-worker").outdated) == 2

    clock.advance(7 * 24 * 3600 - 3600)  # the next Saturday, 02:02
    sync(kube, pools)
    done, record = run()
    assert done.outcome == "applied", done.detail
    assert (record.status.current_version, record.status.next_version) == (done.version, "")
    assert not pools.pool_state(record, "default-worker").outdated
    assert pools.groups["asg"][1].desired_capacity == 4  # no second surge
