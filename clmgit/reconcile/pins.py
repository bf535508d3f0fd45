"""The pins as the control branch has them at the moment of asking, for the plan made again under
a cluster's lease.

A run plans every cluster at its start, but with rolling updates it may reach a cluster hours
later; by then a promotion or a rollback may have moved the pin, or the cluster its channel. So
the run reads the channel files again for each cluster it is about to change: a `rev-parse` of
the control branch and, only when that moved, the channel files from the object database.
"""

from __future__ import annotations

import threading

from clmgit.adapters.git import GitRepo
from clmgit.channels import Channel, load_channels
from clmgit.errors import GitError
from clmgit.layout import MAIN
from clmgit.model import Cluster
from clmgit.workspace import SourceRepos, desired_config_version, pinned_sha, read_branch


class CurrentPins:
    """A `plan.Pin` that reads the control branch (and an unpinned channel's branch) anew on
    every call; the parsed channel files are kept per control-branch commit. Safe to share
    between threads: one call at a time, as the repository's object reader is not thread-safe."""

    def __init__(self, repo: GitRepo, control_branch: str, *,
                 sources: SourceRepos | None = None) -> None:
        """`sources`: the repositories of declared config sources (the pins are then config
        versions, `clmgit.workspace.desired_config_version`)."""
        self._repo = repo
        self._sources = sources
        self._control_branch = control_branch
        self._lock = threading.Lock()
        self._parsed: tuple[str, dict[str, Channel]] | None = None

    def __call__(self, cluster: Cluster) -> tuple[str | None, str]:
        with self._lock:
            control = self._branch(self._control_branch)
            if self._parsed is None or self._parsed[0] != control:
                names = self._sources.sources.names if self._sources else (MAIN,)
                self._parsed = (control, load_channels(self._repo, control, sources=names,
                                                       control_branch=self._control_branch))
            if self._sources is not None:
                return desired_config_version(self._parsed[1], cluster, self._sources.sources,
                                              self._sources)
            return pinned_sha(self._parsed[1], cluster,
                              lambda channel: self._branch(channel.branch))

    def _branch(self, branch: str) -> str:
        """As the workspace reads a branch (the remote's in a plain clone), but anew."""
        sha, _ = read_branch(self._repo, branch)
        if sha is None:
            raise GitError(f"branch {branch!r} does not exist in {self._repo.location}")
        return sha
