"""`clmgit convert --check` on kubernetes-on-aws (../shared/corpus), through the command line,
on a clone with a bare origin: every file of `cluster/` converts at each channel head, and sample
clusters of environments test, production and e2e (four and more node pools, one spot), with the
variants made to reach the templates they leave at comments (Karpenter, kubenurse, EFS, ...),
render byte-identically from the Go original and from the conversion, every template with
content for at least one of them."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.data import corpus_or_skip

BUNDLE = corpus_or_skip()

pytestmark = pytest.mark.slow
CHANNELS = ("dev", "alpha", "beta", "stable")


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module")
def koa(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the corpus (bare origin beside it) with the four channel branches."""
    top = tmp_path_factory.mktemp("koa")
    origin = top / "origin.git"
    git("clone", "-q", "--bare", str(BUNDLE), str(origin))
    work = top / "work"
    git("clone", "-q", "--no-checkout", str(origin), str(work))
    for channel in CHANNELS:
        if channel != git("symbolic-ref", "--short", "HEAD", cwd=work).strip():
            git("branch", "-q", channel, f"origin/{channel}", cwd=work)
    return work


def files_under_cluster(repo: Path, ref: str) -> int:
    return len(git("ls-tree", "-r", "--name-only", ref, "cluster", cwd=repo).split())


@pytest.mark.parametrize("channel", CHANNELS)
def test_channel_head_converts_and_renders_identically(koa: Path, channel: str) -> None:
    started = time.perf_counter()
    result = run_cli("--repo", str(koa), "convert", "--from", channel, "--onto",
                     f"{channel}-checked", "--check", "--ec2", "offline", "--output", "json")
    elapsed = time.perf_counter() - started
    assert result.code == 0, result.out[-3000:] + result.err
    report = json.loads(result.out)["items"][0]
    assert report["files_converted"] == files_under_cluster(koa, channel) >= 268
    check = report["check"]
    assert check["identical"] and check["differences"] == []
    samples = [c for c in check["clusters"] if c not in {v["cluster"] for v in
                                                         check["variants"]}]
    assert [c.rsplit("-", 1)[1] for c in samples] == ["test", "production", "e2e"]
    # every template rendered content for some cluster: the 38 that render only comments for
    # the samples (Karpenter, kubenurse, EFS, the S3 CSI driver, ...) by the variants
    templates = [p for p in git("ls-tree", "-r", "--name-only", channel, "cluster",
                                cwd=koa).split() if p.endswith((".yaml", ".yml"))]
    assert check["coverage"] == {"files": len(templates), "reached": len(templates),
                                 "percent": 100.0, "uncovered": []}
    # one variant reaches the 38, two more set each item compared with constants to each of
    # them; CLM's original renders with every one
    sets = [v["sets"] for v in check["variants"]]
    assert 1 <= len(sets) <= 4
    assert check["settings_left_out"] == []
    # the defaults say dnsmasq and current; the templates compare with unbound and legacy too
    assert [s.get("Cluster.ConfigItems.dns_cache") for s in sets].count("unbound") == 1
    assert [s.get("Cluster.ConfigItems.karpenter_version") for s in sets].count("legacy") == 1
    assert any(s.get("Cluster.ConfigItems.karpenter_pools_enabled") == "true" for s in sets)
    assert any(s.get("Cluster.ConfigItems.network_monitoring_enabled") == "true" for s in sets)
    assert elapsed < 60, f"--check of {channel} took {elapsed:.1f} s"
    sample = check["sample"]
    assert "spot (worker-splitaz, spot)" in sample and "default-worker (worker-splitaz)" in sample
    # every cluster: the defaults, every other template, each pool's profile files
    assert check["renders"] >= 3 * 268
    converted = git("rev-parse", f"{channel}-checked^", cwd=koa).strip()
    assert converted == git("rev-parse", channel, cwd=koa).strip()
    changed = git("diff", "--name-only", channel, f"{channel}-checked", cwd=koa).split()
    assert changed and all(p.startswith("cluster/") for p in changed)


def test_all_channels_in_one_command(koa: Path) -> None:
    result = run_cli("--repo", str(koa), "convert", "--all-channels", "--check", "--ec2",
                     "offline")
    assert result.code == 0, result.out[-3000:] + result.err
    for channel in CHANNELS:
        assert git("rev-parse", f"{channel}-jinja^", cwd=koa).strip() == \
            git("rev-parse", channel, cwd=koa).strip()
    assert result.out.count("all byte-identical") == 4
    assert result.out.count("templates rendered content (100.0 %)\n") == 4
