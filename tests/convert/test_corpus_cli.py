"""`clmgit convert --check` on kubernetes-on-aws (../shared/corpus), through the command line,
on a clone with a bare origin: every file of `cluster/` converts at each channel head, and sample
clusters of environments test, production and e2e (four and more node pools, one spot) render
byte-identically from the Go original and from the conversion."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from clmgit.sandbox.corpus import corpus_bundle
from tests.conftest import run_cli

BUNDLE = corpus_bundle()
if not BUNDLE.exists():
    pytest.skip(f"the corpus is missing: {BUNDLE}", allow_module_level=True)

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
    result = run_cli("--repo", str(koa), "convert", "--from", channel, "--onto",
                     f"{channel}-checked", "--check", "--ec2", "offline", "--output", "json")
    assert result.code == 0, result.out[-3000:] + result.err
    report = json.loads(result.out)["conversions"][0]
    assert report["files_converted"] == files_under_cluster(koa, channel) >= 268
    check = report["check"]
    assert check["identical"] and check["differences"] == []
    assert [c.rsplit("-", 1)[1] for c in check["clusters"]] == ["test", "production", "e2e"]
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
