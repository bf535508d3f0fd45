"""Containment on the real kubernetes-on-aws history (../shared/corpus): channel branches there
are promoted by merge commits, so they are contained in dev by content, not by ancestry."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from clmgit.adapters.git import GitRepo
from clmgit.promotion.content import contains
from tests.helpers.cli import run_cli
from tests.helpers.data import corpus_or_skip

BUNDLE = corpus_or_skip()

pytestmark = pytest.mark.slow


def git(path: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture(scope="module")
def koa(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("koa") / "koa"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(BUNDLE), str(path)], check=True)
    git(path, "fetch", "-q", "--update-head-ok", "origin", "+refs/heads/*:refs/heads/*")
    return path


def test_alpha_is_contained_in_dev_by_its_cluster_tree_not_by_ancestry(koa: Path) -> None:
    repo = GitRepo(koa)
    assert not repo.is_ancestor("alpha", "dev")
    assert int(git(koa, "rev-list", "--count", "dev..alpha")) > 3000
    started = time.perf_counter()
    assert contains(repo, repo.rev("alpha") or "", repo.rev("dev") or "")
    assert time.perf_counter() - started < 10
    older = git(koa, "rev-list", "-n1", "--first-parent", "dev~200")
    assert contains(repo, older, repo.rev("dev") or "")  # an ancestor
    assert not contains(repo, repo.rev("dev") or "", older)  # dev's head is ahead of it


def test_promote_on_the_corpus_goes_forward_by_merge_and_refuses_backwards(koa: Path) -> None:
    alpha, dev = git(koa, "rev-parse", "alpha"), git(koa, "rev-parse", "dev")
    old = git(koa, "rev-parse", "dev~300")
    git(koa, "checkout", "-q", "--orphan", "main")
    git(koa, "read-tree", "--empty")
    channels = koa / "channels"
    channels.mkdir()
    (channels / "dev.yaml").write_text("channel: dev\nbranch: dev\n")
    (channels / "alpha.yaml").write_text(
        "channel: alpha\nbranch: alpha\nsource: dev\n"
        f"groups:\n  - name: default\n    sha: {alpha}\n")
    (koa / "clusters.yaml").write_text("clusters: []\n")
    git(koa, "add", "channels", "clusters.yaml")
    git(koa, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "channels")

    r = run_cli("--repo", str(koa), "promote", "dev", "alpha", "--sha", old)
    assert r.code == 1 and "only moves forward" in r.err and alpha[:7] in r.err
    started = time.perf_counter()
    r = run_cli("--repo", str(koa), "promote", "dev", "alpha", "--dry-run")
    elapsed = time.perf_counter() - started
    assert r.code == 0, r.err
    assert f"{alpha[:7]} -> {dev[:7]}" in r.out
    assert "move branch" not in r.out  # alpha's cluster/ is dev's already: at its pin
    assert elapsed < 20
