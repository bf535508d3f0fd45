"""Leases that hold, with several reconcilers on one registry server on PostgreSQL: a reconciler
whose renewal is refused stops before its next write; a stale plan never applies an older
version; a holder in another PID namespace is not taken as dead; skipped clusters fail the run.
Timings are forced through hooks (the lease stolen inside the engine's first write, the pin
moved between a run's plan and its first lease), not left to luck."""

from __future__ import annotations

import multiprocessing
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import requests

from clmgit.reconcile import run
from clmgit.reconcile.leases import Renewal
from clmgit.registry import new_holder
from clmgit.registry.http import HttpRegistry
from clmgit.workspace import Workspace
from tests.helpers.cli import run_cli
from tests.helpers.leaseworld import World, record_applies, records
from tests.helpers.registry import TOKEN

RENEW = "0.05"  # seconds between renewals here: a refusal is heard at once


def lease_of(url: str, cluster_id: str) -> dict:
    record = requests.get(f"{url}/kubernetes-clusters/{cluster_id}",
                          headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10).json()
    return record.get("lease") or {}


def steal(url: str, cluster_id: str, thief: str) -> None:
    """Take the lease from its holder, as a reconciler that judged it dead would."""
    holder = lease_of(url, cluster_id)["holder"]
    answer = requests.patch(
        f"{url}/kubernetes-clusters/{cluster_id}", timeout=10,
        headers={"Authorization": f"Bearer {TOKEN}"},
        json={"lease": {"holder": thief, "ttl_seconds": 600, "take_over": holder}})
    assert answer.status_code == 200, answer.text


@pytest.fixture
def renewals(monkeypatch):
    """A condition notified after every round of lease renewals."""
    done = threading.Condition()
    count = [0]
    original = Renewal.renew_all

    def renew_all(self):
        original(self)
        with done:
            count[0] += 1
            done.notify_all()

    def wait_for(rounds: int) -> None:
        with done:
            target = count[0] + rounds
            assert done.wait_for(lambda: count[0] >= target, timeout=30)

    monkeypatch.setattr(Renewal, "renew_all", renew_all)
    monkeypatch.setenv("CLMGIT_LEASE_RENEW_SECONDS", RENEW)
    return wait_for


def test_a_reconciler_whose_renewal_is_refused_stops_before_its_next_write(
        tmp_path, make_registry, renewals):
    [record] = records(1)
    url = make_registry("postgresql", [record])
    world = World(tmp_path, url)
    stolen: list[float] = []

    def on_call(cluster_id: str, method: str) -> None:
        if method == "apply_stack" and not stolen:
            steal(url, cluster_id, "thief/1/x")
            renewals(2)  # a whole round of renewals after the theft: it was refused
            stolen.append(world.recorder.calls[-1][2] if world.recorder.calls else 0.0)

    world.recorder.on_call = on_call
    [result] = world.run()

    assert stolen, "the engine reached its first stack write"
    assert result.outcome == "failed"
    assert "taken by another reconciler; stopped before the next write" in result.detail
    # The write under way when the lease was taken went through; not one call after it.
    after = [(method) for _, method, when in world.recorder.calls if when > stolen[0]]
    assert after == ["apply_stack"]
    assert lease_of(url, record["id"])["holder"] == "thief/1/x"
    [cluster] = HttpRegistry(url, token=TOKEN).clusters()
    assert cluster.status.current_version == ""  # the loser recorded nothing


def test_a_stale_plan_never_applies_an_older_version(tmp_path, make_registry, monkeypatch):
    url = make_registry("postgresql", records(6))
    world = World(tmp_path, url)
    record_applies(monkeypatch, world.recorder)
    v1, v2, v3 = world.versions
    assert all(r.outcome == "applied" for r in world.run())
    world.pin(v2)

    def newer_meanwhile(ws: Workspace) -> None:
        """Between the slow run's plan (v2) and its first lease: v3 is pinned and applied to
        every cluster by two other reconcilers at once."""
        original = ws.registry.acquire
        first = threading.Lock()
        others_done = threading.Event()

        def acquire(cluster_id, holder, ttl):
            if first.acquire(blocking=False):
                world.pin(v3)
                others = [threading.Thread(target=world.run) for _ in range(2)]
                for thread in others:
                    thread.start()
                for thread in others:
                    thread.join()
                others_done.set()
            assert others_done.wait(timeout=120)
            return original(cluster_id, holder, ttl)

        monkeypatch.setattr(ws.registry, "acquire", acquire)

    slow = world.run(prepare=newer_meanwhile, concurrency=2)

    assert {r.outcome for r in slow} == {"in-sync"}
    for cluster in HttpRegistry(url, token=TOKEN).clusters():
        assert world.recorder.applied(cluster.id) == [v1, v3]
        assert cluster.status.current_version == world.desired(cluster, v3)
    # A rollback pins the older version: that one is applied, by anyone.
    world.pin(v2, "rollback(beta): to v2")
    assert {r.outcome for r in world.run()} == {"applied"}
    for cluster in HttpRegistry(url, token=TOKEN).clusters():
        assert world.recorder.applied(cluster.id) == [v1, v3, v2]


def holder_in_another_pid_namespace() -> str:
    """A holder id made by a clmgit process in a PID namespace of its own (unshare)."""
    code = "from clmgit.registry import new_holder; print(new_holder())"
    try:
        proc = subprocess.run(["unshare", "--pid", "--fork", sys.executable, "-c", code],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(Path.cwd())})
    except FileNotFoundError:
        pytest.skip("no unshare(1) on this machine")
    if proc.returncode != 0:
        pytest.skip(f"cannot make a PID namespace here: {proc.stderr.strip()}")
    return proc.stdout.strip()


def test_a_lease_in_another_pid_namespace_is_not_taken_as_dead(make_registry):
    [record] = records(1)
    url = make_registry("postgresql", [record])
    other = holder_in_another_pid_namespace()
    host, _, _, identity = other.split("/")
    assert host == socket.gethostname() and identity != new_holder().split("/")[3]
    # Its pid, as this namespace sees pids, is of a process that is gone.
    gone = multiprocessing.get_context("fork").Process(target=os._exit, args=(0,))
    gone.start()
    gone.join()
    holder = f"{host}/{gone.pid}/x/{identity}"
    registry = HttpRegistry(url, token=TOKEN)
    assert registry.acquire(record["id"], holder, 600) is not None

    assert registry.acquire(record["id"], new_holder(), 600) is None
    assert lease_of(url, record["id"])["holder"] == holder
    # The same pid named from this namespace is known to be gone: its lease is taken at once.
    registry.record(record["id"], holder, release=True)
    here = f"{host}/{gone.pid}/x/{new_holder().split('/')[3]}"
    assert registry.acquire(record["id"], here, 600) is not None
    assert registry.acquire(record["id"], new_holder(), 600) is not None


def test_skipped_clusters_are_named_and_fail_the_run(tmp_path, make_registry, moto_endpoint):
    held, free = records(2)
    held["config_items"] = free["config_items"] = {"cluster_update_block": "maintenance"}
    url = make_registry("postgresql", [held, free])
    world = World(tmp_path, url)
    registry = HttpRegistry(url, token=TOKEN)
    assert registry.acquire(held["id"], "elsewhere/1/x", 600) is not None
    # Blocked clusters are not leased; unblock the held one so that it needs work.
    registry.delete_config_item(held["id"], "cluster_update_block")

    result = run_cli("--repo", str(world.path), "--registry", url, "reconcile",
                     "--token", "t", "--output", "json")

    assert result.code == 5, result.err
    assert ("1 cluster(s) not reconciled, other reconcilers hold their leases: lease-0"
            in result.err)
    assert "Traceback" not in result.err


def test_wait_for_leases_waits_for_the_other_holder(tmp_path, make_registry, monkeypatch,
                                                    moto_endpoint):
    [held] = records(1)
    url = make_registry("postgresql", [held])
    world = World(tmp_path, url)
    other = HttpRegistry(url, token=TOKEN)
    assert other.acquire(held["id"], "elsewhere/1/x", 600) is not None
    original = HttpRegistry.acquire
    refused: list[str] = []

    def acquire(self, cluster_id, holder, ttl):
        fresh = original(self, cluster_id, holder, ttl)
        if fresh is None and not refused:
            refused.append(holder)
            # The other reconciler finishes: it blocks the cluster (so that this run needs no
            # cloud) and gives its lease up, right after this run was refused once.
            other.set_config_item(cluster_id, "cluster_update_block", "done elsewhere")
            other.record(cluster_id, "elsewhere/1/x", release=True)
        return fresh

    monkeypatch.setattr(HttpRegistry, "acquire", acquire)
    monkeypatch.setattr(run, "LEASE_POLL_SECONDS", 0.05)

    result = run_cli("--repo", str(world.path), "--registry", url, "reconcile",
                     "--token", "t", "--wait-for-leases", "1m", "--output", "json")

    assert refused, "the run met the other holder's lease"
    assert result.code == 6, result.err  # blocked by the other reconciler: not done here
    assert '"detail": "cluster_update_block' in result.out or "done elsewhere" in result.out
