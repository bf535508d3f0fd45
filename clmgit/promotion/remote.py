"""Planning against the remote: what `--push` and `--pr` start from.

A change that lands on the remote must be planned on the remote's branches, not on local ones
that may be behind: after a run killed between its push and its local update, or after another
clone promoted first, a plan made locally would be stale, rejected by the push, and rejected
again on every retry. So these commands fetch first and plan on `origin/<branch>`.

`--push` also carries local commits the remote lacks (the branch is ahead: it pushes them, as a
plain `git push` would), and afterwards brings every local branch it read to where the remote
now is. A branch that has diverged from the remote is refused with the command that joins them.
`--pr` plans on the remote alone: the pull request is reviewed and merged there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from clmgit.adapters.git import RefUpdate
from clmgit.errors import RefusedError
from clmgit.workspace import Workspace


@dataclass
class RemoteWorkspace(Workspace):
    """The workspace as the remote has it after a fetch (with `carry_local`: or local branches
    that are ahead of it)."""

    carry_local: bool = False
    #: Where each branch the plan read was locally at that moment: the local side moves from
    #: there once the push has landed, or not at all if another local writer moved it since.
    _local: dict[str, str | None] = field(default_factory=dict, repr=False)

    def _read_head(self, branch: str) -> str | None:
        remote = self.repo.rev(f"refs/remotes/{self.remote}/{branch}")
        local = self._local[branch] = self.repo.branch_sha(branch)
        if not self.carry_local:
            return remote
        if remote is None or local is None or self.repo.is_ancestor(local, remote):
            return remote or local
        if self.repo.is_ancestor(remote, local):
            return local
        raise RefusedError(
            f"branch {branch!r} has diverged from {self.remote}/{branch}; join them first "
            f"(`git switch {branch} && git pull --rebase {self.remote} {branch}`), then run "
            "the command again"
        )

    @property
    def location(self) -> str:
        return f"{self.remote} (fetched into {self.repo.location})"

    def local_updates(self, updates: Sequence[RefUpdate]) -> list[RefUpdate]:
        """Each pushed branch moves from where it was locally when planned; the control branch
        and every channel branch that is behind the remote catches up with it (a fast-forward;
        a branch ahead of it was planned from, one that diverged is left alone)."""
        moved = {u.ref: u.new for u in updates}
        branches = [self.control_branch, *(ch.branch for ch in self.channels.values())]
        local = []
        for branch in dict.fromkeys(branches):
            ref = f"refs/heads/{branch}"
            old = self._local[branch] if branch in self._local else self.repo.branch_sha(branch)
            new = moved.get(ref) or self._behind(branch, old)
            if new and new != old:
                local.append(RefUpdate(ref, new, old))
        return local

    def _behind(self, branch: str, local: str | None) -> str | None:
        """The remote's commit for a local branch that is behind it; None otherwise."""
        remote = self.repo.rev(f"refs/remotes/{self.remote}/{branch}")
        if local is None or remote is None or not self.repo.is_ancestor(local, remote):
            return None
        return remote


def remote_workspace(ws: Workspace, *, carry_local: bool) -> RemoteWorkspace:
    """Fetch every branch of the remote and plan against it."""
    if not ws.repo.has_remote(ws.remote):
        raise RefusedError(f"{ws.repo.location} has no remote {ws.remote!r}")
    refspec = f"+refs/heads/*:refs/remotes/{ws.remote}/*"
    ws.repo.run("fetch", "--quiet", "--prune", "--no-tags", ws.remote, refspec)
    return RemoteWorkspace(
        ws.repo, control_branch=ws.control_branch, registry_spec=ws.registry_spec,
        remote=ws.remote, url=ws.url, carry_local=carry_local,
    )
