"""A `--repo URL` is a mirror whose branches the next fetch resets: it is written only with
--push (issue 15, case 3); otherwise the command refuses and the mirror keeps nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fleet import Fleet


def refs(git_dir: Path) -> str:
    return subprocess.run(["git", "-C", str(git_dir), "for-each-ref"], capture_output=True,
                          text=True, check=True).stdout


def mirrors(cache: Path) -> list[Path]:
    return sorted((cache / "repos").glob("*")) if (cache / "repos").exists() else []


@pytest.mark.parametrize("args", [
    ("promote", "dev", "alpha", "--force"),
    ("rollback", "beta", "--to", "{c1}"),
    ("freeze", "beta", "--reason", "release"),
    ("unfreeze", "stable"),
    ("sync-branches",),
])
def test_url_repo_writes_need_push(fleet: Fleet, args: tuple[str, ...], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(cache))
    if args[0] == "unfreeze":  # something to unfreeze
        assert fleet.cli("freeze", "stable", "--reason", "x", "--push").code == 0
    if args[0] == "rollback":  # a pin to roll back from
        assert fleet.cli("promote", "dev", "beta", "--sha", fleet.c2, "--force", "--from-any",
                         "--push").code == 0
    if args[0] == "sync-branches":  # a branch behind its pins
        assert fleet.cli("promote", "dev", "alpha", "--force", "--push").code == 0
        fleet.builder.git("push", "--quiet", "--force", "origin", f"{fleet.c1}:refs/heads/alpha")
    args = tuple(a.format(c1=fleet.c1) for a in args)
    url = f"file://{fleet.origin}"
    before = refs(fleet.origin)
    common = ("--repo", url, "--registry", str(fleet.path / "clusters.yaml"))
    r = run_cli(*common, *args)
    assert r.code == 1, (r.out, r.err)
    assert r.err == "error: a URL repo is written only with --push\n"
    assert refs(fleet.origin) == before
    (mirror,) = mirrors(cache)
    assert refs(mirror) == before  # the mirror holds the remote's refs, nothing of ours
    r = run_cli(*common, *args, "--push")
    assert r.code == 0, r.err
    assert refs(fleet.origin) != before


def test_url_repo_dry_run_needs_no_push(fleet: Fleet) -> None:
    url = f"file://{fleet.origin}"
    r = run_cli("--repo", url, "--registry", str(fleet.path / "clusters.yaml"),
                "promote", "dev", "alpha", "--dry-run", "--force")
    assert r.code == 0, r.err
