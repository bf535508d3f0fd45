"""[7/8]: the registry server on PostgreSQL: listing 5,000 clusters with node pools and config
items through the client, and 1,000 status PATCHes from 8 threads.

A throw-away PostgreSQL server on 127.0.0.1 (clmgit_sandbox.localpg); the registry
server runs in this process, the client talks HTTP to it, as a reconciler would.
"""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from clmgit_sandbox.configrepo import cluster_record
from clmgit_sandbox.localpg import LocalPostgres

from clmgit.model import ClusterStatus, parse_cluster
from clmgit.registry.http import HttpRegistry
from clmgit.registry.server.httpd import RegistryServer

CLUSTERS = 5_000
PATCHES = 1_000
THREADS = 8
RUNS = 7
TOKEN = "bench-token"


def record(i: int) -> dict[str, Any]:
    r = cluster_record(f"aws:1234567890{i % 10:02d}:eu-central-1:c{i}", channel="beta")
    r["config_items"] = {f"item_{k}": f"value-{k}" for k in range(10)}
    pool = dict(r["node_pools"][0])
    pool["config_items"] = {"taints": "dedicated=x:NoSchedule", "labels": "a=b"}
    r["node_pools"] = [pool, {**pool, "name": "spot-worker", "discount_strategy": "spot"}]
    return r


def load(client: HttpRegistry) -> list[str]:
    clusters = [parse_cluster(record(i), "bench") for i in range(CLUSTERS)]
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        list(pool.map(client.put_cluster, clusters))
    return [c.id for c in clusters]


def timed(work: Any) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def patches(client: HttpRegistry, ids: list[str], run: int) -> None:
    def write(i: int) -> None:
        client.record(ids[i], "bench", status=ClusterStatus(current_version=f"r{run}-{i}#h"))

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        list(pool.map(write, range(PATCHES)))


def run() -> list[dict[str, object]]:
    with LocalPostgres() as pg, RegistryServer(pg.create_database("bench"), tokens=[TOKEN]) as s:
        client = HttpRegistry(s.url, token=TOKEN)
        ids = load(client)
        listing = []
        for _ in range(RUNS):
            listing.append(timed(client.clusters))
        assert len(client.clusters()) == CLUSTERS
        for cid in ids[:PATCHES]:
            client.acquire(cid, "bench", 3600)
        writes = [timed(lambda r=r: patches(client, ids, r)) for r in range(RUNS)]
    detail = f"PostgreSQL, {CLUSTERS:,} clusters with 2 node pools and 10 config items each"
    return [
        {
            "benchmark": "registry: list 5,000 clusters",
            "target": "<= 300 ms",
            "median_s": statistics.median(listing),
            "detail": f"{detail}; client GET and parse, median of {RUNS} runs",
        },
        {
            "benchmark": "registry: 1,000 status PATCHes, 8 threads",
            "target": "<= 5 s",
            "median_s": statistics.median(writes),
            "detail": f"{detail}; lease-checked PATCHes, median of {RUNS} runs",
        },
    ]
