"""A registry outage heals by itself: PostgreSQL stopped for 10 s under the registry server while
every cluster of a run is in its engine; when it is back, each cluster's outcome is recorded
within a minute, from the same run, and no cluster is applied twice."""

from __future__ import annotations

import threading
import time

import pytest
from clmgit_sandbox.localpg import LocalPostgres, find_pg_ctl

from clmgit.model import parse_cluster
from clmgit.registry.http import HttpRegistry
from clmgit.registry.server.httpd import RegistryServer
from tests.helpers.leaseworld import World, record_applies, records
from tests.helpers.registry import TOKEN

pytestmark = pytest.mark.slow  # a real 10 s outage of a real PostgreSQL server

OUTAGE_SECONDS = 10
CLUSTERS = 3


def test_after_a_postgresql_outage_every_in_flight_cluster_is_finished_once(
        tmp_path, monkeypatch):
    if find_pg_ctl() is None:
        pytest.skip("PostgreSQL is not installed (no pg_ctl)")
    monkeypatch.setenv("CLMGIT_REGISTRY_TOKEN", TOKEN)
    monkeypatch.setenv("CLMGIT_LEASE_RENEW_SECONDS", "0.5")
    with LocalPostgres() as pg, RegistryServer(pg.create_database("outage"),
                                               tokens=[TOKEN]) as server:
        client = HttpRegistry(server.url, token=TOKEN)
        for record in records(CLUSTERS):
            client.put_cluster(parse_cluster(record, "record"))
        world = World(tmp_path, server.url)
        record_applies(monkeypatch, world.recorder)
        # Every cluster's engine waits at its first call until the database is down.
        in_flight = threading.Barrier(CLUSTERS + 1, timeout=120)
        arrived: set[str] = set()

        def on_call(cluster_id: str, method: str) -> None:
            if cluster_id not in arrived:
                arrived.add(cluster_id)
                in_flight.wait()

        world.recorder.on_call = on_call
        outcome: list = []
        run = threading.Thread(target=lambda: outcome.extend(
            world.run(concurrency=CLUSTERS, lease_seconds=30)))
        run.start()
        while in_flight.n_waiting < CLUSTERS:  # all in their engines, next_version written
            assert run.is_alive()
            time.sleep(0.01)
        pg.halt()
        in_flight.wait()
        time.sleep(OUTAGE_SECONDS)  # the outage itself
        pg.resume()
        back = time.monotonic()
        run.join(timeout=120)
        finished = time.monotonic() - back

        assert not run.is_alive()
        assert [r.outcome for r in outcome] == ["applied"] * CLUSTERS, outcome
        assert finished < 60
        v1 = world.versions[0]
        for cluster in client.clusters():
            assert world.recorder.applied(cluster.id) == [v1]  # once
            assert cluster.status.current_version == world.desired(cluster, v1)
            assert cluster.status.next_version == ""
            assert client.acquire(cluster.id, "next/1/x", 60) is not None  # given up
