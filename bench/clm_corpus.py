"""[5/8]: kubernetes-on-aws (../shared/corpus, dev) rendered with CLM's function library after
its conversion by `clmgit.convert`: every file a cluster gets (defaults, 251 manifests, main and
etcd stacks, 4 node pools' stacks, user data, files and Karpenter profile), with the values the
project computes (`clmgit.config.computed` on an in-memory account: discovered subnets, each
pool's instance info, gzipped user data, generated files' S3 paths).

Measured, for clusters of the test/production/e2e environments:
- each further cluster at the same SHA (templates compiled; a new registry record, so all of it is
  rendered again, defaults included);
- the first cluster at the SHA in a fresh process whose compile cache an earlier process filled
  (the converted text given, as a converted repository's files would be; reading it from git is
  measured by bench/render.py);
- the same with an empty compile cache, and the conversion itself (`convert_tree`).

Run: `.venv/bin/python -m bench.clm_corpus` (prints the figures).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clmgit.convert.tree import convert_tree

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT / "tests"))

from config.corpus import CorpusEc2, CorpusRenderer, corpus_files  # noqa: E402
from config.test_corpus import rendered_manifests, rendered_stacks  # noqa: E402

RUNS = 7


def render_cluster(renderer: CorpusRenderer, environment: str) -> int:
    out = {**rendered_manifests(renderer, environment), **rendered_stacks(renderer, environment)}
    failed = [p for p, text in out.items() if text.startswith("FAILED")]
    assert not failed, failed
    return len(out)


def first_cluster(converted_file: str, cache: str) -> float:
    """Milliseconds of the first cluster in a fresh process (compile cache at `cache`)."""
    code = f"""
import json, sys, time
sys.path.insert(0, {str(PROJECT / 'tests')!r})
from clmgit.config.compiled import use_compile_cache_dir
use_compile_cache_dir({cache!r})
from config.corpus import CorpusEc2, CorpusRenderer
from bench.clm_corpus import render_cluster
converted = json.load(open({converted_file!r}))
start = time.perf_counter()
renderer = CorpusRenderer({{}}, CorpusEc2(), converted=converted)
render_cluster(renderer, "production")
print((time.perf_counter() - start) * 1000)
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


def figures() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        files = corpus_files(Path(tmp))
        start = time.perf_counter()
        converted = convert_tree({p: t.encode() for p, t in files.items()
                                  if p.endswith(".yaml")}).files
        convert_ms = (time.perf_counter() - start) * 1000
        renderer = CorpusRenderer(files, CorpusEc2(), converted=converted)
        count = render_cluster(renderer, "test")  # warm-up
        further = []
        for i in range(RUNS):
            env = ("test", "production", "e2e")[i % 3]
            start = time.perf_counter()
            render_cluster(renderer, env)
            further.append((time.perf_counter() - start) * 1000)
        converted_file = str(Path(tmp) / "converted.json")
        Path(converted_file).write_text(json.dumps(converted))
        cache = str(Path(tmp) / "compiled")
        cold = first_cluster(converted_file, cache)
        warm = statistics.median(first_cluster(converted_file, cache) for _ in range(3))
    return {"files per cluster": count, "conversion ms": convert_ms,
            "further cluster ms (median)": statistics.median(further),
            "first cluster, warm compile cache ms (median of 3)": warm,
            "first cluster, empty compile cache ms": cold}


def run() -> list[dict[str, object]]:
    """The figures as rows of bench/RESULTS.md."""
    f = figures()
    what = (f"kubernetes-on-aws dev converted, {f['files per cluster']:.0f} files per cluster "
            "rendered with CLM's functions and computed values (offline account stand-in)")
    return [
        {"benchmark": "render kubernetes-on-aws: each further cluster", "target": "≤ 30 ms",
         "median_s": f["further cluster ms (median)"] / 1000,
         "detail": f"{what}; clusters of test/production/e2e in turn, median of {RUNS}"},
        {"benchmark": "render kubernetes-on-aws: first cluster, warm compile cache",
         "target": "≤ 300 ms",
         "median_s": f["first cluster, warm compile cache ms (median of 3)"] / 1000,
         "detail": f"{what}; a fresh process whose compile cache an earlier one filled, "
                   "median of 3"},
        {"benchmark": "render kubernetes-on-aws: first cluster, empty compile cache",
         "target": "-", "median_s": f["first cluster, empty compile cache ms"] / 1000,
         "detail": f"{what}; a fresh process, nothing compiled"},
    ]


if __name__ == "__main__":
    for name, value in figures().items():
        print(f"{name}: {value:.0f}")
