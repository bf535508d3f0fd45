"""[8/8]: clmgit on a real history — Zalando's kubernetes-on-aws (`../shared/corpus`, 11k commits
on dev, channel branches promoted by merge commits).

A control branch is added to a clone of the bundle: channel files pinning alpha, beta and stable
at their real heads, dev following its branch, and 1,000 clusters spread over the channels (those
of dev applied at dev's head). Timed as whole commands, as a user runs them: `status`, and
`promote dev alpha` (alpha's `cluster/` tree equals an ancestor's of dev, so the promotion is
forward by content although alpha has thousands of commits dev does not) undone between runs.
Without the corpus the benchmark says so and returns nothing.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record
from clmgit_sandbox.corpus import corpus_bundle

from bench.promotion import promote_and_status
from clmgit.model import desired_version, parse_cluster
from clmgit.registry.file import clusters_yaml

PROJECT = Path(__file__).resolve().parents[1]
BUNDLE = corpus_bundle()
CHANNELS = ("dev", "alpha", "beta", "stable")
SOURCE = {"alpha": "dev", "beta": "alpha", "stable": "beta"}
CLUSTERS = 1_000
RUNS = 5


def channel_file(channel: str, pin: str | None) -> str:
    if channel == "dev":
        return "channel: dev\nbranch: dev\n"
    return (f"channel: {channel}\nbranch: {channel}\nsource: {SOURCE[channel]}\n"
            "gates:\n  applied_in_source: false\n"
            f"groups:\n  - name: default\n    sha: {pin}\n    promoted_from: {SOURCE[channel]}\n")


def build(tmp: Path) -> ConfigRepoBuilder:
    b = ConfigRepoBuilder(tmp / "kubernetes-on-aws")
    b.git("fetch", "--quiet", str(BUNDLE), "refs/heads/*:refs/heads/*")
    heads = {ch: b.sha(ch) for ch in CHANNELS}
    records = []
    for i in range(CLUSTERS):
        ch = CHANNELS[i % 4]
        r = cluster_record(f"aws:1234567890{i % 10:02d}:eu-central-1:c{i}", channel=ch,
                           alias=f"c{i}")
        r["status"]["current_version"] = desired_version(heads[ch], parse_cluster(r, "bench"))
        r["status"]["applied_at"] = "2024-10-25T00:00:00Z"
        records.append(r)
    files = {f"channels/{ch}.yaml": channel_file(ch, heads[ch]) for ch in CHANNELS}
    b.commit("main", {**files, "clusters.yaml": clusters_yaml(records)}, "Channels and fleet")
    return b


def run() -> list[dict[str, object]]:
    if not BUNDLE.exists():
        print(f"skip corpus: {BUNDLE} is absent", file=sys.stderr)
        return []
    with tempfile.TemporaryDirectory(prefix="clmgit-bench-corpus-") as tmp:
        b = build(Path(tmp))
        commits = int(b.git("rev-list", "--count", "dev"))
        promote, status = promote_and_status(b, RUNS)
    detail = (f"kubernetes-on-aws, {commits:,} commits on dev, {CLUSTERS:,} clusters; median of "
              f"{RUNS} whole commands")
    return [
        {"benchmark": "promote dev alpha on kubernetes-on-aws", "target": "≤ 1.5 s",
         "median_s": statistics.median(promote), "detail": detail},
        {"benchmark": "status on kubernetes-on-aws", "target": "≤ 1.0 s",
         "median_s": statistics.median(status), "detail": detail},
    ]
