"""Run every benchmark module and write bench/RESULTS.md with target, median and machine."""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

MODULES = ["promotion", "render", "rolling", "reconcile", "registry"]
HERE = Path(__file__).parent


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, Python {platform.python_version()}"


def cpu_check() -> float:
    """Milliseconds of a fixed pure-Python workload (best of 5): how fast this machine is right
    now. Shared machines vary by half from one hour to the next; runs compare through this."""
    def work() -> float:
        start = time.perf_counter()
        data = [{"name": f"item-{i}", "values": list(range(i % 50))} for i in range(20_000)]
        json.loads(json.dumps(data))
        sum(len(d["name"]) * i for i, d in enumerate(data))
        return time.perf_counter() - start
    return min(work() for _ in range(5)) * 1000


def main() -> None:
    only = sys.argv[1:]
    rows = []
    before = cpu_check()
    for name in MODULES:
        if only and name not in only:
            continue
        try:
            module = importlib.import_module(f"bench.{name}")
        except ModuleNotFoundError as e:
            print(f"skip {name}: {e}", file=sys.stderr)
            continue
        print(f"running bench/{name}.py ...", file=sys.stderr, flush=True)
        for r in module.run():
            rows.append(r)
            print(
                f"  {r['benchmark']}: {r['median_s'] * 1000:.0f} ms (target {r['target']})",
                file=sys.stderr,
                flush=True,
            )
    lines = [
        "# Benchmark results",
        "",
        f"Machine: {machine()}",
        "",
        f"CPU check (a fixed pure-Python workload, best of 5): {before:.0f} ms before the run, "
        f"{cpu_check():.0f} ms after it. Figures of runs whose CPU check differs compare "
        "in that proportion.",
        "",
        "| benchmark | target | median | detail |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['benchmark']} | {r['target']} | {r['median_s'] * 1000:.0f} ms | {r['detail']} |"
        for r in rows
    ]
    (HERE / "RESULTS.md").write_text("\n".join(lines) + "\n")
    print((HERE / "RESULTS.md").read_text())


if __name__ == "__main__":
    main()
