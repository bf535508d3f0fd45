"""Run every benchmark module and write bench/RESULTS.md with target, median and machine."""

from __future__ import annotations

import importlib
import os
import platform
import sys
from pathlib import Path

MODULES = ["promotion", "render", "rolling", "reconcile", "registry"]
HERE = Path(__file__).parent


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, Python {platform.python_version()}"


def main() -> None:
    only = sys.argv[1:]
    rows = []
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
