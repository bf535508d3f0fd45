"""[6/8]: `clmgit reconcile` over 1,000 clusters in four channels.

- **In sync**: every cluster already at its version. Timed as the whole command (a fresh
  `python -m clmgit` process, as a user or a CI job runs it), median of 7 after one warm-up run
  that fills the parsed-registry cache; the cold first run is reported too.
- **Dry run**: every cluster pending, `--dry-run`: each is rendered in full (the synthetic config
  of bench/render.py: 5 stacks, 4 node-pool profiles, 250 manifests) and taken through the
  engine's dry run. "No cloud calls", as the issue asks: the engine runs on the in-memory
  backends (`FakeStacks`, `FakeNodePools`, `FakeKube`), so this measures clmgit, not moto. Run
  in-process through `clmgit.reconcile.session.reconcile`, the function the command calls, with
  the command's default concurrency of 4: once in one process, once with a worker process per
  usable core (the command's default), side by side in the same run.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from clmgit_sandbox.configrepo import ConfigRepoBuilder
from clmgit_sandbox.doubles import FakeKube, FakeNodePools, FakeStacks

from bench.render import change, commit, make_cluster, synthetic_config
from clmgit.config.values import placeholder_values
from clmgit.engine.cluster import Backends
from clmgit.engine.kube import Kind
from clmgit.machine import usable_cores
from clmgit.model import Cluster, cluster_to_dict, desired_version
from clmgit.reconcile.session import Options, reconcile
from clmgit.registry.file import clusters_yaml
from clmgit.workspace import Workspace, open_workspace

CLUSTERS = 1_000
CHANNELS = ("dev", "alpha", "beta", "stable")
RUNS = 7


def build(tmp: Path, *, in_sync: bool, clusters: int = CLUSTERS) -> tuple[Path, dict[str, str]]:
    """A config repo whose four channels are at four versions of the synthetic config."""
    b = ConfigRepoBuilder(tmp / "config")
    files = synthetic_config()
    shas: dict[str, str] = {}
    parent = None
    for n, channel in enumerate(reversed(CHANNELS)):  # stable oldest, dev newest
        files = {**files, **change(files, n)}
        parent = shas[channel] = commit(b, files, parent=parent)
    for channel in ("alpha", "beta", "stable"):
        b.git("branch", channel, shas[channel])
    channel_files = {"channels/dev.yaml": "channel: dev\nbranch: dev\n"}
    for channel in ("alpha", "beta", "stable"):
        channel_files[f"channels/{channel}.yaml"] = yaml.safe_dump({
            "channel": channel, "branch": channel,
            "groups": [{"name": "default", "sha": shas[channel]}]}, sort_keys=False)
    records = []
    for i in range(clusters):
        cluster = make_cluster(i)
        channel = CHANNELS[i % 4]
        record = cluster_to_dict(cluster) | {"channel": channel}
        if in_sync:
            pinned = Cluster(**{**cluster.__dict__, "channel": channel})
            record["status"]["current_version"] = desired_version(shas[channel], pinned)
        records.append(record)
    b.commit("main", {**channel_files, "clusters.yaml": clusters_yaml(records)},
             "Channels and clusters")
    return b.path, shas


def whole_command(repo: Path, *args: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "clmgit", "--repo", str(repo), *args],
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"reconcile failed ({proc.returncode}): {proc.stderr.strip()}")
    return elapsed


#: What the synthetic config applies, besides what FakeKube serves already.
KINDS = (*FakeKube.KINDS, Kind("v1", "ServiceAccount", True, "serviceaccounts"),
         Kind("v1", "ConfigMap", True, "configmaps"),
         Kind("apps/v1", "Deployment", True, "deployments"))


def fake_backends(cluster: Cluster) -> Backends:
    return Backends(stacks=FakeStacks(), pools=FakeNodePools(), kube=FakeKube(KINDS),
                    values=placeholder_values(cluster))


def dry_run(ws: Workspace, *, processes: int) -> tuple[float, float]:
    """(wall, CPU) seconds of a dry run of every cluster, each of which must come out planned;
    CPU is this process's and its workers' (user + system), which load inflates far less."""
    cpu = time.process_time()
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    outcomes = reconcile(ws, Options(dry_run=True, backends=fake_backends, processes=processes))
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - cpu + (after.ru_utime - workers.ru_utime) + (
        after.ru_stime - workers.ru_stime)
    planned = sum(r.outcome == "planned" for r in outcomes)
    if planned != CLUSTERS:
        failed = next(r for r in outcomes if r.outcome != "planned")
        raise SystemExit(f"dry run: {planned} planned; first other: {failed}")
    return elapsed, cpu


def run() -> list[dict[str, object]]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("CLMGIT_CACHE_DIR", str(Path(tmp) / "cache"))
        repo, _ = build(Path(tmp) / "sync", in_sync=True)
        cold = whole_command(repo, "reconcile")
        warm = statistics.median(whole_command(repo, "reconcile") for _ in range(RUNS))
        out = subprocess.run([sys.executable, "-m", "clmgit", "--repo", str(repo), "reconcile",
                              "--output", "json"], capture_output=True, text=True).stdout
        summary = json.loads(out)["summary"]
        if summary != {"in-sync": CLUSTERS}:
            raise SystemExit(f"in-sync run: expected {CLUSTERS} in sync, got {summary}")
        results.append({
            "benchmark": "reconcile, 1,000 clusters all in sync (whole command)",
            "target": "≤ 1.0 s", "median_s": warm,
            "detail": f"median of {RUNS} warm runs; cold first run {cold:.2f} s "
                      "(parses clusters.yaml once)",
        })

        repo, _ = build(Path(tmp) / "pending", in_sync=False)
        ws = open_workspace(str(repo))
        cores = usable_cores()
        load = os.getloadavg()[0]
        (one, one_cpu), (many, many_cpu) = (dry_run(ws, processes=n) for n in (1, cores))
        results.append({
            "benchmark": "reconcile --dry-run, 1,000 clusters in 4 channels",
            "target": "≤ 45 s", "median_s": many,
            "detail": f"{cores} worker processes, one run, CPU {many_cpu:.1f} s "
                      f"({many_cpu / CLUSTERS * 1000:.0f} ms per cluster); {one:.1f} s in one "
                      f"process in the same run, CPU {one_cpu:.1f} s "
                      f"({one_cpu / CLUSTERS * 1000:.0f} ms per cluster): {one / many:.2f}× "
                      "faster; every cluster rendered in full (250 manifests, 5 stacks, 4 "
                      "node-pool profiles), engine dry run on in-memory backends, concurrency 4; "
                      f"load average {load:.1f} at the start",
        })
    return results
