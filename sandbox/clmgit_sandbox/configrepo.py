"""Throw-away config repositories for tests, the demo and the benchmarks.

`ConfigRepoBuilder` makes a real git repository with a control branch and channel branches from
dicts of files, and a bare `origin` beside it to push to.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from clmgit.adapters.git import run_git
from clmgit_sandbox.configtree import EXAMPLE_REPO, example_files

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Platform",
    "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada Platform",
    "GIT_COMMITTER_EMAIL": "ada@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def example_channels() -> dict[str, str]:
    """The project's `channels/*.yaml` (also `examples/config-repo/channels/`, a link to it), as
    files for a config repo."""
    return example_files("channels")


def example_records() -> list[dict[str, Any]]:
    """The clusters of the example `clusters.yaml`: those the demo and the sandbox create."""
    loaded = yaml.safe_load((EXAMPLE_REPO / "clusters.yaml").read_text())
    return list(loaded["clusters"])


def init_example_repo(path: Path) -> ConfigRepoBuilder:
    """The example config repo made at `path` by `examples/config-repo/init.sh`, the way the
    manual (docs/how-to/your-config-repo.md) tells a new user to make one: so the demo proves
    the documented command."""
    subprocess.run([str(EXAMPLE_REPO / "init.sh"), str(path)], env={**os.environ, **GIT_ENV},
                   check=True, stdout=subprocess.DEVNULL)
    return ConfigRepoBuilder(path, create=False)


class ConfigRepoBuilder:
    """A config repo at `path` (with a working tree, the control branch checked out); with
    `create=False` one that exists already."""

    def __init__(self, path: Path, *, control_branch: str = "main", create: bool = True) -> None:
        self.path = path
        self.control_branch = control_branch
        if not create:
            self.root = self.git("rev-list", "--max-parents=0", control_branch)
            return
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", f"--initial-branch={control_branch}")
        self.git("config", "user.name", GIT_ENV["GIT_AUTHOR_NAME"])
        self.git("config", "user.email", GIT_ENV["GIT_AUTHOR_EMAIL"])
        self.git("commit", "--quiet", "--allow-empty", "-m", "Initial commit")
        self.root = self.sha(control_branch)

    def git(self, *args: str, input: bytes | None = None) -> str:
        return run_git(args, cwd=self.path, stdin=input, env=GIT_ENV).stdout.decode().strip()

    def sha(self, ref: str) -> str:
        return self.git("rev-parse", f"{ref}^{{commit}}")

    def commit(
        self,
        branch: str,
        files: Mapping[str, str | None],
        message: str,
        *,
        start: str | None = None,
    ) -> str:
        """Commit `files` (None deletes) on `branch`, creating it from `start` (default: the
        root commit); the control branch stays checked out."""
        parent = self.sha(branch) if self._exists(branch) else self.sha(start or self.root)
        env_index = str(self.path / ".git" / "clmgit-builder-index")
        env = {**GIT_ENV, "GIT_INDEX_FILE": env_index}

        def run(*args: str, data: bytes | None = None) -> str:
            return run_git(args, cwd=self.path, stdin=data, env=env).stdout.decode().strip()

        run("read-tree", parent)
        for name, text in files.items():
            if text is None:
                run("update-index", "--force-remove", name)
                continue
            blob = run("hash-object", "-w", "--stdin", data=text.encode())
            run("update-index", "--add", "--cacheinfo", f"100644,{blob},{name}")
        tree = run("write-tree")
        new = run("commit-tree", tree, "-p", parent, "-m", message)
        os.unlink(env_index)
        if branch == self.control_branch:
            self.git("read-tree", "-m", "-u", parent, new)
        self.git("update-ref", f"refs/heads/{branch}", new)
        return new

    def _exists(self, branch: str) -> bool:
        args = ["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"]
        return run_git(args, cwd=self.path, ok=(0, 1)).returncode == 0

    def add_origin(self) -> Path:
        """A bare clone beside the repo, added as `origin`, with every branch pushed."""
        origin = self.path.parent / f"{self.path.name}-origin.git"
        run_git(["init", "--quiet", "--bare", f"--initial-branch={self.control_branch}",
                 str(origin)], cwd=self.path.parent)
        self.git("remote", "add", "origin", str(origin))
        self.git("push", "--quiet", "origin", "refs/heads/*:refs/heads/*")
        self.git("fetch", "--quiet", "origin")
        return origin


def cluster_record(
    cid: str, *, channel: str, alias: str | None = None, environment: str = "test", **extra: object
) -> dict[str, Any]:
    """A registry record in CLM's format, with one node pool."""
    local_id = cid.rsplit(":", 1)[-1]
    record: dict[str, Any] = {
        "id": cid,
        "alias": alias or local_id,
        "infrastructure_account": "aws:123456789012",
        "region": "eu-central-1",
        "local_id": local_id,
        "provider": "zalando-aws",
        "api_server_url": f"https://{local_id}.example.org",
        "channel": channel,
        "environment": environment,
        "criticality_level": 1 if environment == "production" else 2,
        "lifecycle_status": "ready",
        "config_items": {},
        "node_pools": [
            {
                "name": "default-worker",
                "profile": "worker-default",
                "instance_types": ["m5.large"],
                "discount_strategy": "none",
                "min_size": 1,
                "max_size": 3,
                "config_items": {},
            }
        ],
        "status": {"current_version": "", "last_version": "", "next_version": "", "problems": []},
    }
    record.update(extra)
    return record
