"""What a refusal must leave exactly as it was: the checkout's status, HEAD, every ref and the
index file's bytes (read without letting git refresh the index, which would rewrite it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clmgit.adapters.git import run_git

#: git writes nothing while it only reads (no opportunistic index refresh).
READ_ONLY = {"GIT_OPTIONAL_LOCKS": "0"}


@dataclass(frozen=True)
class Checkout:
    status: str
    head: str
    refs: str
    index: bytes


def snapshot(path: Path) -> Checkout:
    def git(*args: str) -> str:
        return run_git(args, cwd=path, env=READ_ONLY).stdout.decode()

    git_dir = Path(git("rev-parse", "--absolute-git-dir").strip())
    return Checkout(
        status=git("status", "--porcelain=v1", "--untracked-files=all"),
        head=git("symbolic-ref", "HEAD") + git("rev-parse", "HEAD"),
        refs=git("for-each-ref", "--format=%(refname) %(objectname)"),
        index=(git_dir / "index").read_bytes(),
    )
