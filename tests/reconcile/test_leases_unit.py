"""The lease machinery on its own: the engine's guard in front of its backends, deadlines shared
with forked workers, a renewal never re-taking a lease given up, and an outcome the registry did
not take recorded by the holder's next round instead of applied again."""

from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path

import pytest
from clmgit_sandbox.configtree import cluster_tree
from clmgit_sandbox.doubles import FakeClock, StaticConfigSource

from clmgit.engine.cluster import Engine
from clmgit.engine.guard import LeaseExpired
from clmgit.model import Cluster, parse_cluster
from clmgit.reconcile.leases import LeaseTable, LeaseTiming, Renewal, Unfinished
from clmgit.reconcile.plan import plan
from clmgit.reconcile.run import Reconciler
from clmgit.registry import RegistryUnavailable
from clmgit.registry.file import FileRegistry, clusters_yaml
from tests.helpers.leaseworld import World, records

SHA = "a" * 40


def test_the_engine_asks_the_lease_before_every_backend_call(tmp_path):
    world = World(tmp_path, "unused")
    cluster = parse_cluster(records(1)[0], "record")
    asked: list[str] = []

    def lease(cluster_id: str) -> None:
        asked.append(cluster_id)
        if len(asked) > 3:
            raise LeaseExpired(f"the lease of {cluster_id} was taken")

    engine = Engine(StaticConfigSource({SHA: cluster_tree(1)}), world.backends,
                    clock=FakeClock(), lease=lease)
    with pytest.raises(LeaseExpired):
        engine.apply(cluster, SHA)

    assert len(world.recorder.calls) == 3  # the fourth call was never made
    assert set(asked) == {cluster.id}
    # A dry run holds no lease and asks none.
    asked.clear()
    engine.apply(cluster, SHA, dry_run=True)
    assert asked == []


def test_a_deadline_passed_or_revoked_stops_the_engine_in_a_forked_worker_too():
    now = [100.0]
    table = LeaseTable(2, clock=lambda: now[0])
    table.hold("a", 150.0)
    table.check("a")
    now[0] = 150.0
    with pytest.raises(LeaseExpired, match="could not be renewed in time"):
        table.check("a")
    table.extend("a", 200.0)
    table.check("a")
    with pytest.raises(LeaseExpired, match="was taken by another reconciler"):
        table.check("b")

    # A worker forked before the revoke sees it.
    context = multiprocessing.get_context("fork")
    go, answer = context.Event(), context.SimpleQueue()

    def worker() -> None:
        go.wait()
        try:
            table.check("a")
            answer.put("held")
        except LeaseExpired as e:
            answer.put(str(e))

    child = context.Process(target=worker)
    child.start()
    table.revoke("a")
    go.set()
    child.join()
    assert "taken by another reconciler" in answer.get()


class BlockingRegistry:
    """`acquire` waits for `go` while a renewal is in flight."""

    location = "memory"

    def __init__(self) -> None:
        self.acquired: list[str] = []
        self.inside = threading.Event()
        self.go = threading.Event()

    def acquire(self, cluster_id: str, holder: str, ttl: float) -> object:
        self.acquired.append(cluster_id)
        self.inside.set()
        assert self.go.wait(timeout=30)
        return object()


def test_a_lease_given_up_is_never_renewed_again():
    registry = BlockingRegistry()
    table = LeaseTable(1)
    renewal = Renewal(registry, "me", LeaseTiming(900), table)  # type: ignore[arg-type]  # a partial double
    table.hold("a", table.clock() + 600)
    with renewal.held("a"):
        renewing = threading.Thread(target=renewal.renew_all)
        renewing.start()
        assert registry.inside.wait(timeout=30)
        stopped = threading.Event()

        def stop() -> None:
            renewal.stop_renewing("a")
            stopped.set()

        stopper = threading.Thread(target=stop)
        stopper.start()
        assert not stopped.wait(timeout=0.2)  # it waits for the renewal in flight
        registry.go.set()
        renewing.join()
        stopper.join()
        renewal.renew_all()  # the loop's next round: the lease given up stays given up
    assert registry.acquired == ["a"]


def test_an_outcome_the_registry_did_not_take_is_recorded_by_the_next_round(
        tmp_path: Path, monkeypatch):
    path = tmp_path / "clusters.yaml"
    path.write_text(clusters_yaml(records(1)))
    registry = FileRegistry(path)
    down = [True]
    original = FileRegistry.record

    def record(self, cluster_id, holder, **kwargs):
        if kwargs.get("release") and down[0]:
            raise RegistryUnavailable("the cluster registry failed with 503; try again later")
        return original(self, cluster_id, holder, **kwargs)

    monkeypatch.setattr(FileRegistry, "record", record)
    applied: list[str] = []

    class Engine_:
        def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> object:
            applied.append(cluster.id)
            return type("Report", (), {"changes": ["applied"]})()

    unfinished = Unfinished()

    def round_() -> list:
        targets = [plan(c, lambda cluster: (SHA, "default")) for c in registry.clusters()]
        return Reconciler(registry, Engine_(), holder="ctl/1/x", lease_seconds=1.2,  # type: ignore[arg-type]  # partial doubles
                          unfinished=unfinished).run(targets)

    [first] = round_()
    assert first.outcome == "failed"
    assert "kept for this holder's next round" in first.detail
    down[0] = False
    [second] = round_()

    assert (second.outcome, second.detail) == ("applied",
                                               "recorded the outcome of an earlier round")
    assert len(applied) == 1
    [cluster] = registry.clusters()
    assert cluster.status.current_version == second.version
    assert cluster.status.next_version == ""


def test_a_decommission_whose_lease_is_gone_deletes_nothing(tmp_path):
    world = World(tmp_path, "unused")
    cluster = parse_cluster(records(1)[0], "record")

    def lease(cluster_id: str) -> None:
        raise LeaseExpired(f"the lease of {cluster_id} was taken")

    engine = Engine(StaticConfigSource({SHA: cluster_tree(1)}), world.backends,
                    clock=FakeClock(), lease=lease)
    with pytest.raises(LeaseExpired):  # not reported as "kube-system not scaled down"
        engine.decommission(cluster)
    assert world.recorder.calls == []


def test_a_worker_whose_run_was_killed_stops_before_its_next_call():
    context = multiprocessing.get_context("fork")
    answer, parent_gone = context.SimpleQueue(), context.Event()

    def run() -> None:  # the run: it holds a lease, forks its engine worker, and dies
        table = LeaseTable(1)
        table.hold("a", table.clock() + 600)

        def worker() -> None:
            assert parent_gone.wait(timeout=30)
            try:
                table.check("a")
                answer.put("went on")
            except LeaseExpired as e:
                answer.put(str(e))

        context.Process(target=worker).start()
        os._exit(0)  # as a SIGKILL would: nothing waits for the worker

    killed = context.Process(target=run)
    killed.start()
    killed.join()
    parent_gone.set()
    assert answer.get() == "the run that held the lease of a is gone; stopped before the next write"
