"""[7/8] at fleet scale: the read-only commands at 10,000 and 100,000 clusters.

Whole commands (a fresh `python -m clmgit` each, as a user or a CI job runs them), after one
warm-up run that fills the parsed-registry cache (reported as "cold"):

- `status` (table and `-o json`) and `promote dev alpha` (`--dry-run` and real, the real one
  undone between runs) on bench/promotion.py's repository (20,000 commits on dev) with 10,000
  clusters; `status` again with 100,000.
- `reconcile` with every cluster in sync on bench/reconcile.py's repository (the synthetic config,
  four node pools per cluster), 10,000 and 100,000 clusters.
- The registry server on PostgreSQL: a client listing 10,000 clusters (bench/registry.py's
  records), in this process.

`CLMGIT_BENCH_KEEP=DIR` builds the repositories (and the cache) in DIR and keeps them for the
next run. `CLMGIT_BENCH_SCALE=reads` measures only the read-only commands at 10,000 clusters
(`status`, `status -o json`, `promote --dry-run`, and `status` as a CI runner starts it: cold
and with the cache restored), to check a change to their path.

The machine is shared, so each row gives the minimum and median wall time and the CPU time
of the command (user + system, which load inflates far less than wall time). For the commands
measured at both sizes the cost is split into a per-cluster slope (the difference over the
90,000 more clusters) and the fixed start-up cost it leaves at zero clusters.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clmgit_sandbox.configrepo import ConfigRepoBuilder

from bench import promotion, reconcile

SIZES = (10_000, 100_000)
RUNS = 7
LARGE_RUNS = 3  # 100,000 clusters: a run takes seconds


@dataclass(frozen=True)
class Timing:
    """Seconds of repeated runs: wall and CPU (user + system of the command's processes)."""

    wall: list[float]
    cpu: list[float]
    cold: float

    def text(self) -> str:
        return (f"wall min {_s(min(self.wall))}, median {_s(statistics.median(self.wall))}; "
                f"CPU min {_s(min(self.cpu))}, median {_s(statistics.median(self.cpu))}; "
                f"{len(self.wall)} runs after a cold one ({_s(self.cold)})")


def _s(seconds: float) -> str:
    return f"{seconds:.2f} s"


def command(repo: Path, *args: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole `clmgit` command (`env`: its environment)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "clmgit", "--repo", str(repo), *args],
                          cwd=repo, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"clmgit {' '.join(args)} failed ({proc.returncode}): "
                         f"{proc.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def repeat(run: Callable[[], tuple[float, float]], runs: int,
           undo: Callable[[], None] = lambda: None) -> Timing:
    cold = run()[0]
    undo()
    wall, cpu = [], []
    for _ in range(runs):
        w, c = run()
        undo()
        wall.append(w)
        cpu.append(c)
    return Timing(wall, cpu, cold)


def slope(small: Timing, large: Timing, sizes: tuple[int, int]) -> str:
    """The per-cluster cost between the sizes (minimum CPU, the least disturbed by load) and
    the fixed cost it leaves at zero clusters."""
    per = (min(large.cpu) - min(small.cpu)) / (sizes[1] - sizes[0])
    fixed = min(small.cpu) - per * sizes[0]
    return f"slope {per * 1e6:.1f} µs of CPU per cluster, fixed {fixed:.2f} s"


def built(folder: Path, build: Callable[[Path], object]) -> Path:
    """The config repo in `folder`, built unless an earlier run with CLMGIT_BENCH_KEEP left
    it there (a 100,000-cluster repository takes minutes to build on a loaded machine)."""
    repo = folder / "config"
    if not (folder / "built").exists():
        build(folder)
        (folder / "built").touch()
    return repo


def reads_only() -> bool:
    """Only the read-only commands at the smaller size (`CLMGIT_BENCH_SCALE=reads`)."""
    return os.environ.get("CLMGIT_BENCH_SCALE") == "reads"


def promotion_rows(tmp: Path, clusters: int) -> dict[str, Timing]:
    repo = built(tmp / f"promotion-{clusters}",
                 lambda folder: promotion.build(folder, clusters=clusters))
    b = ConfigRepoBuilder(repo, create=False)
    main, alpha = b.sha("main"), b.sha("alpha")

    def undo() -> None:
        b.git("read-tree", "-m", "-u", b.sha("main"), main)
        b.git("update-ref", "refs/heads/main", main)
        b.git("update-ref", "refs/heads/alpha", alpha)

    runs = RUNS if clusters <= SIZES[0] else LARGE_RUNS
    found = {"status": repeat(lambda: command(b.path, "status"), runs),
             "status -o json": repeat(lambda: command(b.path, "status", "-o", "json"), runs)}
    if clusters <= SIZES[0]:
        found["promote --dry-run"] = repeat(
            lambda: command(b.path, "promote", "--dry-run", "dev", "alpha"), runs)
        if not reads_only():
            found["promote"] = repeat(lambda: command(b.path, "promote", "dev", "alpha"),
                                      runs, undo)
    return found


def ci_start(tmp: Path, clusters: int) -> dict[str, Timing]:
    """`status` as a CI runner starts it: a fresh process with an empty cache
    (`XDG_CACHE_HOME` a new empty folder, as on a new runner), and one whose `~/.cache/clmgit/yaml`
    was restored, copied from the cache a cold run left, as the reusable workflows restore it."""
    repo = built(tmp / f"promotion-{clusters}",
                 lambda folder: promotion.build(folder, clusters=clusters))
    runners = tmp / f"runners-{clusters}"
    shutil.rmtree(runners, ignore_errors=True)
    count = iter(range(1_000_000))

    def runner(restore: bool) -> tuple[float, float]:
        home = runners / str(next(count))
        env = {k: v for k, v in os.environ.items() if k != "CLMGIT_CACHE_DIR"}
        env["XDG_CACHE_HOME"] = str(home)
        if restore:
            shutil.copytree(runners / "0" / "clmgit" / "yaml", home / "clmgit" / "yaml")
        return command(repo, "status", env=env)

    return {"cold": repeat(lambda: runner(False), RUNS),
            "restored": repeat(lambda: runner(True), RUNS)}


def in_sync(tmp: Path, clusters: int) -> Timing:
    repo = built(tmp / f"sync-{clusters}",
                 lambda folder: reconcile.build(folder, in_sync=True, clusters=clusters))
    runs = RUNS if clusters <= SIZES[0] else LARGE_RUNS
    return repeat(lambda: command(repo, "reconcile"), runs)


def registry_list(clusters: int) -> Timing:
    """A client listing `clusters` records from the registry server on PostgreSQL."""
    from clmgit_sandbox.localpg import LocalPostgres

    from bench import registry as reg
    from clmgit.model import parse_cluster
    from clmgit.registry.http import HttpRegistry
    from clmgit.registry.server.httpd import RegistryServer

    with LocalPostgres() as pg, RegistryServer(pg.create_database("scale"),
                                               tokens=[reg.TOKEN]) as s:
        client = HttpRegistry(s.url, token=reg.TOKEN)
        records = [parse_cluster(reg.record(i), "bench") for i in range(clusters)]
        with reg.ThreadPoolExecutor(max_workers=reg.THREADS) as pool:
            list(pool.map(client.put_cluster, records))

        def listing() -> tuple[float, float]:
            cpu, wall = time.process_time(), time.perf_counter()
            found = client.clusters()
            if len(found) != clusters:
                raise SystemExit(f"registry list: {len(found)} clusters, not {clusters}")
            return time.perf_counter() - wall, time.process_time() - cpu

        return repeat(listing, RUNS)


def ci_rows(tmp: Path, load: str) -> list[dict[str, object]]:
    """The rows of `ci_start` at 10,000 clusters: the time a CI job spends in clmgit before it
    starts work (target 3 s), on an empty cache and on a restored one."""
    small = SIZES[0]
    start = ci_start(tmp, small)
    detail = {"cold": "a fresh runner: XDG_CACHE_HOME an empty folder for each run, the registry "
                      "parsed and checked, its cache written",
              "restored": "~/.cache/clmgit/yaml restored from a cold run's, the checked records "
                          "loaded from it"}
    names = {"cold": "cold (empty cache)", "restored": "cache restored"}
    return [{"benchmark": f"status, {small:,} clusters, {names[k]}", "target": "≤ 3.0 s",
             "median_s": statistics.median(t.wall),
             "detail": f"{promotion.COMMITS:,} commits on dev, whole command, {detail[k]}; "
                       f"{t.text()}; {load}"}
            for k, t in start.items()]


def run() -> list[dict[str, object]]:
    small, large = SIZES
    load = f"load average {os.getloadavg()[0]:.1f} at the start"
    rows: list[dict[str, object]] = []

    def row(name: str, target: str, t: Timing, detail: str) -> None:
        rows.append({"benchmark": name, "target": target, "median_s": statistics.median(t.wall),
                     "detail": f"{detail}; {t.text()}; {load}"})

    keep = os.environ.get("CLMGIT_BENCH_KEEP")
    with tempfile.TemporaryDirectory(prefix="clmgit-bench-scale-") as scratch:
        tmp = keep or scratch
        os.environ.setdefault("CLMGIT_CACHE_DIR", str(Path(tmp) / "cache"))
        at = {n: promotion_rows(Path(tmp), n) for n in (SIZES[:1] if reads_only() else SIZES)}
        repo = f"{promotion.COMMITS:,} commits on dev"
        for name in ("status", "status -o json"):
            row(f"{name}, {small:,} clusters", "≤ 1.0 s", at[small][name],
                f"{repo}, whole command")
            if large in at:
                row(f"{name}, {large:,} clusters", "-", at[large][name],
                    f"{repo}, whole command; {slope(at[small][name], at[large][name], SIZES)}")
        row(f"promote --dry-run dev alpha, {small:,} clusters", "≤ 1.0 s",
            at[small]["promote --dry-run"], f"{repo}, whole command")
        rows.extend(ci_rows(Path(tmp), load))
        if reads_only():
            return rows
        row(f"promote dev alpha, {small:,} clusters", "≤ 1.0 s", at[small]["promote"],
            f"{repo}, whole command, undone between runs")
        sync = {n: in_sync(Path(tmp), n) for n in SIZES}
        detail = "the synthetic config, 4 node pools per cluster, whole command"
        row(f"reconcile in sync, {small:,} clusters", "≤ 1.5 s", sync[small], detail)
        row(f"reconcile in sync, {large:,} clusters", "-", sync[large],
            f"{detail}; {slope(sync[small], sync[large], SIZES)}")
    listing = registry_list(small)
    row(f"registry: list {small:,} clusters", "≤ 0.6 s", listing,
        "PostgreSQL, 2 node pools and 10 config items each; client GET and parse in the "
        "process serving it (CPU: both)")
    return rows
