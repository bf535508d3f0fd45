"""[1/8]: `clmgit promote dev alpha` and `clmgit status` on 20,000 commits and 1,000 clusters.

Both are timed as whole commands (a fresh `python -m clmgit` process each, as a user runs them);
the promotion is undone between runs so that every run does the full work.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clmgit_sandbox.configrepo import (
    ConfigRepoBuilder,
    cluster_record,
    example_channels,
)

from clmgit.model import desired_version, parse_cluster
from clmgit.registry.file import clusters_yaml

COMMITS = 20_000
CLUSTERS = 1_000
RUNS = 7


def fast_import(b: ConfigRepoBuilder, commits: int) -> str:
    """`commits` commits on dev, each changing cluster/stack.yaml, through git fast-import."""
    parts = []
    for i in range(commits):
        data = f"version: {i}\n".encode()
        message = f"Change {i}".encode()
        parts.append(b"commit refs/heads/dev\n")
        parts.append(f"committer Bench <b@x> {1_700_000_000 + i} +0000\n".encode())
        parts.append(b"data %d\n%s\n" % (len(message), message))
        if i == 0:
            parts.append(f"from {b.root}\n".encode())
        parts.append(b"M 100644 inline cluster/stack.yaml\ndata %d\n%s\n" % (len(data), data))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=b.path, input=b"".join(parts), check=True)
    return b.sha("dev")


def build(tmp: Path, *, clusters: int = CLUSTERS, commits: int = COMMITS) -> ConfigRepoBuilder:
    """The config repo: `commits` commits on dev, `clusters` clusters over four channels (those
    of dev applied at dev's head)."""
    b = ConfigRepoBuilder(tmp / "config")
    head = fast_import(b, commits)
    first = b.git("rev-list", "--max-parents=0", "dev").splitlines()[-1]
    for ch in ("alpha", "beta", "stable"):
        b.git("branch", ch, first)
    channels = ("dev", "alpha", "beta", "stable")
    records = []
    for i in range(clusters):
        ch = channels[i % 4]
        r = cluster_record(
            f"aws:1234567890{i % 10:02d}:eu-central-1:c{i}",
            channel=ch,
            alias=f"c{i}-canary" if i % 50 == 2 else f"c{i}",
        )
        r["config_items"] = {f"item_{k}": f"value-{k}" for k in range(10)}
        if ch == "dev":
            r["status"]["current_version"] = desired_version(head, parse_cluster(r, "bench"))
            r["status"]["applied_at"] = "2026-01-01T00:00:00Z"
        records.append(r)
    b.commit("main", {**example_channels(), "clusters.yaml": clusters_yaml(records)}, "Fleet")
    return b


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {proc.stderr.decode()}")
    return elapsed


def promote_and_status(b: ConfigRepoBuilder, runs: int) -> tuple[list[float], list[float]]:
    """Seconds of `runs` whole `promote dev alpha` commands (each undone, so every run does the
    full work) and of `runs` `status` commands."""
    clmgit = [sys.executable, "-m", "clmgit", "--repo", str(b.path)]
    main, alpha = b.sha("main"), b.sha("alpha")
    promote = []
    for _ in range(runs):
        promote.append(timed([*clmgit, "promote", "dev", "alpha"], b.path))
        b.git("read-tree", "-m", "-u", b.sha("main"), main)
        b.git("update-ref", "refs/heads/main", main)
        b.git("update-ref", "refs/heads/alpha", alpha)
    return promote, [timed([*clmgit, "status"], b.path) for _ in range(runs)]


def run() -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory(prefix="clmgit-bench-") as tmp:
        promote, status = promote_and_status(build(Path(tmp)), RUNS)
    detail = f"{COMMITS:,} commits on dev, {CLUSTERS:,} clusters, median of {RUNS} runs"
    return [
        {
            "benchmark": "promote dev alpha",
            "target": "<= 1.5 s",
            "median_s": statistics.median(promote),
            "detail": detail,
        },
        {
            "benchmark": "status",
            "target": "<= 1.0 s",
            "median_s": statistics.median(status),
            "detail": detail,
        },
    ]
