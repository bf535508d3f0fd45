"""[6/8]: `clmgit convert` on kubernetes-on-aws (`../shared/corpus`, dev head), timed as whole
commands in fresh processes, as a user runs them:

- converting the corpus: `convert --from dev --onto NEW` — read `cluster/` at dev (links
  resolved), parse and emit every file, write the one commit and the branch;
- `--check` of one cluster: `convert --from dev --dry-run --check --registry ONE` with a
  clusters.yaml holding one production cluster (4 node pools, one spot) and the offline EC2
  stand-in — the conversion, then every template rendered from the Go original (evaluator) and
  from the conversion (clmgit's renderer, compile cache empty: the converted text is new) and
  compared; and the same command again, the compiled conversion in the cache (a check re-run
  after review);
- the conversion alone in this process (`convert_tree`, the files already read).

Without the corpus the benchmark says so and returns nothing.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from clmgit_sandbox.corpus import corpus_bundle

from clmgit.convert.clmdata import sample_clusters, tree_profiles
from clmgit.convert.migrate import read_source
from clmgit.convert.tree import convert_tree
from clmgit.model import cluster_to_dict
from clmgit.registry.file import clusters_yaml

BUNDLE = corpus_bundle()
RUNS = 5
CLMGIT = [sys.executable, "-m", "clmgit"]


def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


CPU: dict[str, list[float]] = {}  # CPU seconds of each timed command, by its first word


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(args: list[str], env: dict[str, str], *, key: str) -> float:
    """Wall-clock seconds of a whole command; its CPU seconds go to CPU —
    on a shared machine the wall clock grows with the load, the CPU time much less."""
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.run([*CLMGIT, *args], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    CPU.setdefault(key, []).append(_cpu() - cpu)
    if proc.returncode != 0:
        raise RuntimeError(f"clmgit {' '.join(args)} failed: {proc.stderr}")
    return elapsed


def _cpu_median(key: str) -> str:
    return f"CPU {statistics.median(CPU[key]):.2f} s"


def run() -> list[dict[str, object]]:
    if not BUNDLE.exists():
        print(f"skip convert: {BUNDLE} is absent", file=sys.stderr)
        return []
    with tempfile.TemporaryDirectory(prefix="clmgit-bench-convert-") as tmp:
        top = Path(tmp)
        repo = top / "koa.git"
        _git("clone", "-q", "--bare", str(BUNDLE), str(repo))
        env = {**os.environ, "CLMGIT_CACHE_DIR": str(top / "cache")}

        convert_runs = [_timed(["--repo", str(repo), "convert", "--from", "dev", "--onto",
                                f"jinja-{i}"], env, key="convert") for i in range(RUNS)]

        source = read_source(str(repo), "dev")
        in_process = []
        for _ in range(RUNS):
            start = time.perf_counter()
            conversion = convert_tree(source.files)
            in_process.append(time.perf_counter() - start)

        production = sample_clusters("dev", tree_profiles(source.files))[1]
        record = cluster_to_dict(replace(production, id="aws:123456789012:eu-central-1:bench"))
        registry = top / "clusters.yaml"
        registry.write_text(clusters_yaml([record]))
        check = ["--repo", str(repo), "convert", "--from", "dev", "--dry-run", "--check",
                 "--registry", str(registry), "--ec2", "offline"]
        check_runs, warm_runs = [], []
        for i in range(RUNS):
            cold = {**env, "CLMGIT_CACHE_DIR": str(top / f"cold-{i}")}
            check_runs.append(_timed(check, cold, key="cold"))
            # the compiled conversion kept on disk
            warm_runs.append(_timed(check, cold, key="warm"))
    files = len(conversion.files)
    pools = len(production.node_pools)
    return [
        {"benchmark": "convert kubernetes-on-aws dev (whole command)", "target": "≤ 5 s",
         "median_s": statistics.median(convert_runs),
         "detail": f"{files} files of cluster/ read at dev, converted, written as one commit on "
                   f"a new branch; fresh process; median of {RUNS}; {_cpu_median('convert')}"},
        {"benchmark": "of which the conversion alone", "target": "-",
         "median_s": statistics.median(in_process),
         "detail": f"convert_tree of the {files} files, already read; median of {RUNS}"},
        {"benchmark": "convert --check of one cluster (whole command)", "target": "≤ 2 s",
         "median_s": statistics.median(check_runs),
         "detail": f"dev converted, then every template of one production cluster ({pools} node "
                   "pools, one spot), and of the variants made from it to cover the tree, "
                   "rendered by the Go evaluator and by clmgit's renderer "
                   "(compile cache empty; a forked helper compiles ahead) and compared; offline "
                   f"EC2; fresh process; median of {RUNS}; {_cpu_median('cold')} (the helper's "
                   "counted when it ended first)"},
        {"benchmark": "convert --check of one cluster again (whole command)", "target": "≤ 2 s",
         "median_s": statistics.median(warm_runs),
         "detail": "as above, run a second time: the converted templates' compiled code read "
                   f"from the compile cache the first run filled; median of {RUNS}; "
                   f"{_cpu_median('warm')}"},
    ]
