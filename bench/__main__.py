"""Run every benchmark module and write bench/RESULTS.md with target, median and machine."""

from __future__ import annotations

import importlib
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

MODULES = ["promotion", "corpus", "clm_corpus", "render", "rolling", "reconcile", "registry",
           "replicas", "convert", "report", "scale"]
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


Row = dict[str, str]
COLUMNS = ("benchmark", "target", "median", "CPU check", "previous run", "detail")


def read_results(path: Path) -> dict[str, Row]:
    """The rows of an earlier RESULTS.md, by benchmark name (older files without the CPU check
    and previous-run columns are read too)."""
    if not path.exists():
        return {}
    lines = [ln for ln in path.read_text().splitlines() if ln.startswith("| ")]
    if not lines:
        return {}
    header = [c.strip() for c in lines[0].strip("|").split(" | ")]
    # Files before per-row checks had one check for the whole run.
    whole = re.search(r"(\d+) ms before the run, (\d+) ms after", path.read_text())
    found = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        row = dict(zip(header, cells, strict=False))
        if "benchmark" in row:
            if whole and "CPU check" not in row:
                row["CPU check"] = f"{whole[1]}–{whole[2]} ms"
            found[row["benchmark"]] = row
    return found


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def main() -> None:
    """`python -m bench [module ...]`: run the benchmarks (all, or the modules named) and update
    their rows in RESULTS.md; every row keeps the run before it and the CPU check of its run."""
    only = sys.argv[1:]
    before = cpu_check()
    fresh: list[dict[str, object]] = []
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
            fresh.append(r)
            print(f"  {r['benchmark']}: {fmt(float(r['median_s']))} (target {r['target']})",
                  file=sys.stderr, flush=True)
    check = f"{before:.0f}–{cpu_check():.0f} ms"
    path = HERE / "RESULTS.md"
    rows = read_results(path)
    for r in fresh:
        name = str(r["benchmark"])
        old = rows.get(name)
        previous = f"{old['median']} (CPU check {old.get('CPU check', '?')})" if old else "—"
        rows[name] = {"benchmark": name, "target": str(r["target"]),
                      "median": fmt(float(str(r["median_s"]))), "CPU check": check,
                      "previous run": previous, "detail": str(r["detail"])}
    lines = [
        "# Benchmark results",
        "",
        f"Machine: {machine()}. `make bench` runs every module, `python -m bench MODULE...` some;",
        "either updates only its own rows. *CPU check*: a fixed pure-Python workload (best of 5)",
        "timed before and after the run that measured the row — this machine's speed varies by",
        "up to half from hour to hour, so rows compare in that proportion.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    lines += ["| " + " | ".join(row.get(c, "") for c in COLUMNS) + " |" for row in rows.values()]
    path.write_text("\n".join(lines) + "\n")
    print(path.read_text())


if __name__ == "__main__":
    main()
