"""Keys made by `ssh-keygen` and commits signed by git itself, for the tests of signed versions."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from clmgit_sandbox.configrepo import GIT_ENV

from clmgit.adapters.git import run_git
from tests.helpers.fleet import Fleet

needs_ssh_keygen = pytest.mark.skipif(shutil.which("ssh-keygen") is None,
                                      reason="ssh-keygen is not installed")


def keygen(path: Path, comment: str) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f",
                    str(path)], check=True)
    return path


def signed_commit(repo: Fleet | Path, branch: str, key: Path, path: str, text: str) -> str:
    """A commit on `branch` of `repo` changing `path`, signed with `key` by git itself."""
    where = repo.path if isinstance(repo, Fleet) else repo
    env = {**GIT_ENV, "GIT_INDEX_FILE": str(where / ".git" / "sign-index")}

    def git(*args: str, data: bytes | None = None) -> str:
        return run_git(args, cwd=where, stdin=data, env=env).stdout.decode().strip()

    git("read-tree", branch)
    blob = git("hash-object", "-w", "--stdin", data=text.encode())
    git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    new = git("-c", "gpg.format=ssh", "-c", f"user.signingKey={key}", "commit-tree", "-S",
              git("write-tree"), "-p", branch, "-m", f"Change {path} (signed)")
    git("update-ref", f"refs/heads/{branch}", new)
    return new
