"""The `Registry` seam, the same for every backend: a clusters.yaml, the server on SQLite, the
server on PostgreSQL. Listing, leases (take, renew, refuse, release, expire, lose) and writes,
and concurrent writers: no lost update, exactly one lease holder."""

from __future__ import annotations

from typing import Any, TypeVar

import pytest

from clmgit.errors import RegistryError
from clmgit.model import ClusterStatus, Problem, parse_cluster
from clmgit.registry import LeaseLost, Registry, open_registry
from tests.helpers.concurrency import all_at_once
from tests.helpers.registry import BACKENDS, MakeRegistry, records

T = TypeVar("T")
C0 = "aws:123456789012:eu-central-1:c0"
C1 = "aws:123456789012:eu-central-1:c1"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def opened(make_registry: MakeRegistry, backend: str, count: int = 3) -> Registry:
    return open_registry(make_registry(backend, records(count)), default_dir=None)


def status_of(registry: Registry, cluster_id: str) -> ClusterStatus:
    return next(c.status for c in registry.clusters() if c.id == cluster_id)


def test_lists_every_record_in_registry_order(make_registry: MakeRegistry, backend: str) -> None:
    raw: list[dict[str, Any]] = records(3)
    raw[1]["config_items"] = {"cluster_update_block": "true", "x": "1"}
    raw[2]["node_pools"][0]["config_items"] = {"taints": "a=b:NoSchedule"}
    registry = open_registry(make_registry(backend, raw), default_dir=None)
    assert registry.clusters() == [parse_cluster(r, "expected") for r in raw]


def test_lease_is_taken_renewed_refused_and_released(
    make_registry: MakeRegistry, backend: str
) -> None:
    registry = opened(make_registry, backend)
    taken = registry.acquire(C0, "a", 60)
    assert taken is not None and taken.id == C0
    assert registry.acquire(C0, "b", 60) is None
    assert registry.acquire(C0, "a", 60) is not None  # renewed by its holder
    assert registry.acquire(C1, "b", 60) is not None  # leases are per cluster
    registry.record(C0, "a", release=True)
    assert registry.acquire(C0, "b", 60) is not None


def test_record_writes_status_and_lifecycle_under_the_lease(
    make_registry: MakeRegistry, backend: str
) -> None:
    registry = opened(make_registry, backend)
    assert registry.acquire(C0, "a", 60) is not None
    status = ClusterStatus(
        current_version="abc#h1",
        last_version="old#h0",
        problems=(Problem("urn:x", "it broke", "details"),),
        applied_at="2026-01-01T00:00:00Z",
    )
    registry.record(C0, "a", status=status, lifecycle_status="decommission-requested")
    after = next(c for c in registry.clusters() if c.id == C0)
    assert after.status == status
    assert after.lifecycle_status == "decommission-requested"
    assert status_of(registry, C1) == ClusterStatus()
    fresh = registry.acquire(C0, "a", 60)
    assert fresh is not None and fresh.status == status  # acquire returns the record as it is


def test_a_holder_without_the_lease_writes_nothing(
    make_registry: MakeRegistry, backend: str
) -> None:
    registry = opened(make_registry, backend)
    with pytest.raises(LeaseLost):
        registry.record(C0, "nobody", status=ClusterStatus(current_version="x#y"))
    assert registry.acquire(C0, "a", 60) is not None
    with pytest.raises(LeaseLost):
        registry.record(C0, "b", status=ClusterStatus(current_version="x#y"), release=True)
    assert status_of(registry, C0) == ClusterStatus()
    assert registry.acquire(C0, "b", 60) is None  # the failed release did not release


def test_an_expired_lease_is_taken_over_and_its_old_holder_loses_it(
    make_registry: MakeRegistry, backend: str
) -> None:
    registry = opened(make_registry, backend)
    assert registry.acquire(C0, "a", 0) is not None
    assert registry.acquire(C0, "b", 60) is not None
    with pytest.raises(LeaseLost):
        registry.record(C0, "a", status=ClusterStatus(current_version="late#h"))
    registry.record(C0, "b", status=ClusterStatus(current_version="b#h"))
    assert status_of(registry, C0).current_version == "b#h"


def test_an_unknown_cluster_is_an_error(make_registry: MakeRegistry, backend: str) -> None:
    registry = opened(make_registry, backend)
    with pytest.raises(RegistryError, match="no-such-cluster"):
        registry.acquire("no-such-cluster", "a", 60)


@pytest.mark.slow  # a stress test: 200 writers at once (60 on the file registry)
def test_many_concurrent_writes_of_different_clusters_lose_nothing(
    make_registry: MakeRegistry, backend: str
) -> None:
    # The file registry rewrites clusters.yaml under one lock per write (a round-trip edit of
    # every record): 200 of them are a minute of YAML, not more of a test. 60 writers still
    # all wait on that lock at once.
    count = 60 if backend == "file" else 200
    registry = opened(make_registry, backend, count)
    ids = [c.id for c in registry.clusters()]
    for i, cid in enumerate(ids):
        assert registry.acquire(cid, f"h{i}", 600) is not None

    def write(i: int) -> None:
        registry.record(ids[i], f"h{i}", status=ClusterStatus(current_version=f"v{i}#h"))

    all_at_once(count, write)
    written = {c.id: c.status.current_version for c in registry.clusters()}
    assert written == {cid: f"v{i}#h" for i, cid in enumerate(ids)}


def test_50_concurrent_lease_attempts_on_one_cluster_have_one_winner(
    make_registry: MakeRegistry, backend: str
) -> None:
    registry = opened(make_registry, backend)
    results = all_at_once(50, lambda i: registry.acquire(C0, f"h{i}", 600))
    winners = [i for i, r in enumerate(results) if r is not None]
    assert len(winners) == 1
    winner = f"h{winners[0]}"
    registry.record(C0, winner, status=ClusterStatus(current_version="won#h"))
    for i in range(50):
        if f"h{i}" != winner:
            with pytest.raises(LeaseLost):
                registry.record(C0, f"h{i}", status=ClusterStatus(current_version="lost#h"))
    assert status_of(registry, C0).current_version == "won#h"
