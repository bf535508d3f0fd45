"""[6/8]: `clmgit report --html` of 1,000 and 10,000 clusters: generation time (the whole
command, a fresh process as a user runs it), file size, and in a headless Chromium the time to
first render and to filter the cluster table.

The fleet: 400 commits to cluster/ on dev; alpha, beta and stable pinned 10, 50 and 100 commits
behind; clusters spread over the four channels, most in sync, some pending, failed or updating.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record, example_channels

from bench.promotion import fast_import
from clmgit.model import desired_version, parse_cluster
from clmgit.registry.file import clusters_yaml

COMMITS = 400
SIZES = (1_000, 10_000)
RUNS = 3
#: What the benchmark types into the table's controls: text, state, both, and back to all.
FILTERS = (("c1234", ""), ("", "failed"), ("beta", "pending"), ("", ""))


def pinned_channels(pins: dict[str, str]) -> dict[str, str]:
    """The project's channel files with every group of a channel pinned to its SHA."""
    files = {}
    for path, text in example_channels().items():
        channel = Path(path).stem
        lines = []
        for line in text.splitlines():
            lines.append(line)
            if channel in pins and line.lstrip().startswith("- name:"):
                indent = line[: len(line) - len(line.lstrip())]
                lines.append(f"{indent}  sha: {pins[channel]}")
        files[path] = "\n".join(lines) + "\n"
    return files


def build(tmp: Path, clusters: int) -> ConfigRepoBuilder:
    b = ConfigRepoBuilder(tmp / "config")
    head = fast_import(b, COMMITS)
    pins = {"alpha": b.sha("dev~10"), "beta": b.sha("dev~50"), "stable": b.sha("dev~100")}
    first = b.git("rev-list", "--max-parents=0", "dev").splitlines()[-1]
    for ch in ("alpha", "beta", "stable"):
        b.git("branch", ch, first)
    desired = {"dev": head, **pins}
    channels = ("dev", "alpha", "beta", "stable")
    records = []
    for i in range(clusters):
        ch = channels[i % 4]
        r: dict[str, Any] = cluster_record(
            f"aws:1234567890{i % 10:02d}:eu-central-1:c{i}", channel=ch,
            alias=f"c{i}-canary" if i % 50 == 2 else f"c{i}")
        r["lifecycle_status"] = "ready"
        applied = desired[ch] if i % 10 < 7 else b.sha("dev~200")  # 30% pending
        r["status"]["current_version"] = desired_version(applied, parse_cluster(r, "bench"))
        r["status"]["applied_at"] = "2026-01-01T00:00:00Z"
        if i % 20 == 7:
            r["status"]["problems"] = [{"type": "stack", "title": f"stack c{i} failed"}]
        elif i % 20 == 8:
            r["status"]["next_version"] = f"{desired[ch]}#x"
        records.append(r)
    b.commit("main", {**pinned_channels(pins), "clusters.yaml": clusters_yaml(records)}, "Fleet")
    return b


def generate(b: ConfigRepoBuilder, out: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of the whole command; on a shared machine the CPU time (user +
    system) is the steadier figure."""
    cmd = [sys.executable, "-m", "clmgit", "--repo", str(b.path), "report", "--html", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"clmgit report: {proc.stderr.decode()}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def breakdown(b: ConfigRepoBuilder) -> str:
    """Where one generation's time goes, in a running process (registry cache warm)."""
    from clmgit.promotion.status import fleet_status, group_rollup
    from clmgit.report.gather import gather
    from clmgit.report.html import render_html
    from clmgit.workspace import open_workspace

    ws = open_workspace(str(b.path))
    marks = [time.perf_counter()]
    ws.clusters  # noqa: B018 - the registry read, timed
    marks.append(time.perf_counter())
    states = fleet_status(ws)
    marks.append(time.perf_counter())
    group_rollup(ws, states)
    marks.append(time.perf_counter())
    report = gather(open_workspace(str(b.path)))
    marks.append(time.perf_counter())
    render_html(report)
    marks.append(time.perf_counter())
    ms = [f"{(b - a) * 1000:.0f} ms" for a, b in zip(marks, marks[1:], strict=False)]
    return (f"in a running process: registry read {ms[0]}, status rows {ms[1]}, group rollup "
            f"(the planner per group) {ms[2]}; whole gather {ms[3]}, HTML {ms[4]}")


def in_browser(driver: Any, page: Path) -> tuple[float, float]:
    """(ms from navigation to the table's first rows, ms of the slowest filter), each the median
    of RUNS loads; a filter is timed with the layout it causes."""
    renders, filters = [], []
    for _ in range(RUNS):
        driver.get(page.as_uri())
        renders.append(float(driver.execute_script("return window.clmgitReport.renderedAt")))
        filters.append(max(float(driver.execute_script(
            "const t = performance.now(); window.clmgitReport.filter(arguments[0], arguments[1]);"
            "document.body.getBoundingClientRect(); return performance.now() - t;", text, state))
            for text, state in FILTERS))
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        if errors:
            raise RuntimeError(f"the report logged errors: {errors}")
    return statistics.median(renders), statistics.median(filters)


def run() -> list[dict[str, object]]:
    from clmgit_sandbox.browser import headless_chromium, missing

    rows: list[dict[str, object]] = []
    pages = []
    with tempfile.TemporaryDirectory(prefix="clmgit-bench-") as tmp:
        for n in SIZES:
            b = build(Path(tmp) / f"fleet-{n}", n)
            out = Path(tmp) / f"report-{n}.html"
            load = os.getloadavg()[0]
            times = [generate(b, out) for _ in range(RUNS)]
            size = out.stat().st_size
            where = breakdown(b)
            pages.append((n, out, size))
            wall, cpu = ([t[i] for t in times] for i in (0, 1))
            rows.append({"benchmark": f"report --html, {n:,} clusters", "target": "<= 2 s",
                         "median_s": statistics.median(wall),
                         "detail": f"whole command, {COMMITS} commits, file {size / 1e6:.1f} MB, "
                                   f"median of {RUNS} runs; wall min {min(wall):.2f} s; CPU min "
                                   f"{min(cpu):.2f} s, median {statistics.median(cpu):.2f} s; "
                                   f"load average {load:.1f} at the start; {where}"})
        reason = missing()
        if reason:
            print(f"  no browser rows: {reason}", file=sys.stderr)
            return rows
        with headless_chromium() as driver:
            for n, out, size in pages:
                render_ms, filter_ms = in_browser(driver, out)
                rows.append({
                    "benchmark": f"report filter in Chromium, {n:,} clusters",
                    "target": "<= 1 s", "median_s": filter_ms / 1000,
                    "detail": f"slowest of {len(FILTERS)} filters; first render "
                              f"{render_ms:.0f} ms after navigation; file {size / 1e6:.1f} MB; "
                              f"median of {RUNS} loads"})
    return rows
