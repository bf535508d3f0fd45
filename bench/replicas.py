"""[7/8]: throughput of 1, 2 and 3 controller replicas on one registry server on PostgreSQL.

Each replica is a process of its own that runs controller rounds (`reconcile` of the whole
fleet, as `clmgit controller` does, with its own lease holder) until a round finds nothing to
do. The engine runs on in-memory backends (`clmgit_sandbox.memorycloud`) with the sandbox's
`cluster/` tree rendered in full, and every apply waits `WAIT` seconds, as a real one waits on
CloudFormation: what is measured is how well the replicas share the fleet through the leases.
Every row checks that each cluster was applied exactly once, by all replicas together.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record
from clmgit_sandbox.configtree import cluster_tree
from clmgit_sandbox.localpg import LocalPostgres
from clmgit_sandbox.memorycloud import memory_backends

from clmgit.engine.cluster import Backends
from clmgit.model import Cluster, parse_cluster
from clmgit.reconcile.session import Options, reconcile
from clmgit.registry import new_holder
from clmgit.registry.http import HttpRegistry
from clmgit.registry.server.httpd import RegistryServer
from clmgit.workspace import open_workspace

CLUSTERS = 60
WAIT = 2.0  # seconds every apply waits on the simulated cloud
CONCURRENCY = 4
TOKEN = "bench-token"


class _Waiting:
    """Stacks whose first change waits `WAIT` seconds."""

    def __init__(self, stacks: Any) -> None:
        self._stacks, self._waited = stacks, False

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._stacks, name)
        if name != "apply_stack" or self._waited:
            return value
        self._waited = True
        time.sleep(WAIT)
        return value


def waiting_backends(cluster: Cluster) -> Backends:
    real = memory_backends(cluster)
    return Backends(_Waiting(real.stacks), real.pools, real.kube, real.values)


def build(tmp: Path) -> tuple[Path, str]:
    b = ConfigRepoBuilder(tmp / "config")
    sha = b.commit("beta", cluster_tree(1), "Config version 1")
    for channel in ("dev", "alpha", "stable"):
        b.git("branch", channel, sha)
    channels = {f"channels/{c}.yaml": yaml.safe_dump({"channel": c, "branch": c})
                for c in ("dev", "alpha", "stable")}
    channels["channels/beta.yaml"] = yaml.safe_dump(
        {"channel": "beta", "branch": "beta", "groups": [{"name": "default", "sha": sha}]})
    b.commit("main", channels, "Channels")
    return b.path, sha


def replica(repo: str, url: str, start: Any, applied: Any) -> None:
    """Controller rounds until one has nothing to do; adds its applies to `applied`."""
    start.wait()
    options = Options(backends=waiting_backends, processes=1, concurrency=CONCURRENCY,
                      holder=new_holder())
    while True:
        results = reconcile(open_workspace(repo, registry=url), options)
        mine = sum(r.outcome == "applied" for r in results)
        with applied.get_lock():
            applied.value += mine
        if all(r.outcome == "in-sync" for r in results):
            return
        if not mine:
            time.sleep(0.2)  # the rest is leased by the others: a controller's pause, short


def one_run(pg: LocalPostgres, repo: Path, replicas: int, run_no: int) -> tuple[float, int]:
    with RegistryServer(pg.create_database(f"replicas_{replicas}_{run_no}"),
                        tokens=[TOKEN]) as server:
        client = HttpRegistry(server.url, token=TOKEN)
        for i in range(CLUSTERS):
            record = cluster_record(f"aws:123456789012:eu-central-1:r{i}", channel="beta",
                                    alias=f"r{i}", lifecycle_status="ready")
            client.put_cluster(parse_cluster(record, "record"))
        context = multiprocessing.get_context("fork")
        start, applied = context.Event(), context.Value("i", 0)
        workers = [context.Process(target=replica, args=(str(repo), server.url, start, applied))
                   for _ in range(replicas)]
        for worker in workers:
            worker.start()
        began = time.perf_counter()
        start.set()
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - began
        if any(w.exitcode != 0 for w in workers):
            raise SystemExit(f"a replica failed: exit codes {[w.exitcode for w in workers]}")
        return elapsed, int(applied.value)


def run() -> list[dict[str, object]]:
    os.environ["CLMGIT_REGISTRY_TOKEN"] = TOKEN
    rows: list[dict[str, object]] = []
    base = 0.0
    with tempfile.TemporaryDirectory() as tmp, LocalPostgres() as pg:
        os.environ.setdefault("CLMGIT_CACHE_DIR", str(Path(tmp) / "cache"))
        repo, _ = build(Path(tmp))
        for replicas in (1, 2, 3):
            seconds, applies = one_run(pg, repo, replicas, 0)
            if applies != CLUSTERS:
                raise SystemExit(f"{replicas} replicas applied {applies} times for {CLUSTERS} "
                                 "clusters: each must be applied exactly once")
            base = base or seconds
            rows.append({
                "benchmark": f"controller replicas on one registry: {replicas}",
                "target": "-", "median_s": seconds,
                "detail": f"{CLUSTERS} clusters, each applied exactly once; "
                          f"{CLUSTERS / seconds:.1f} clusters/s, ×{base / seconds:.2f} of one "
                          f"replica; each replica a process of controller rounds, concurrency "
                          f"{CONCURRENCY}, every apply waits {WAIT:g} s on the simulated cloud "
                          "(sandbox tree rendered in full, in-memory backends); PostgreSQL; "
                          "one run",
            })
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
