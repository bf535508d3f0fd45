"""The workspace a command runs in: the config repo, its control branch, channels and registry.

Built once by the CLI and passed down; everything is read lazily and at most once.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from clmgit.adapters.git import GitRepo, RefUpdate
from clmgit.channels import Channel, group_pins, load_channels
from clmgit.errors import ConfigError, GitError
from clmgit.layout import (
    SETTINGS_PATH,
    Layout,
    Source,
    Sources,
    check_source_repo,
    load_settings,
    parse_settings,
    parse_sources,
)
from clmgit.model import Cluster, channel_overrides, config_version
from clmgit.registry import Registry, open_registry


@dataclass
class Workspace:
    repo: GitRepo
    control_branch: str = "main"
    registry_spec: str | None = None
    remote: str = "origin"
    #: The git URL this workspace mirrors (None: a repository on disk). A mirror's branches are
    #: the remote's, overwritten by the next fetch, so it is written only through a push.
    url: str | None = None
    _heads: dict[str, str | None] = field(default_factory=dict, repr=False)
    #: Branches read from `<remote>/<branch>` because there is no local branch of that name.
    _from_remote: set[str] = field(default_factory=set, repr=False)

    @cached_property
    def control_sha(self) -> str:
        sha = self.branch_head(self.control_branch)
        if sha is None:
            raise GitError(f"branch {self.control_branch!r} does not exist in {self.location}")
        return sha

    @property
    def location(self) -> str:
        return self.repo.location

    @cached_property
    def channels(self) -> dict[str, Channel]:
        channels = load_channels(self.repo, self.control_sha,
                                 control_branch=self.control_branch)
        if not channels:
            raise ConfigError(
                f"no channel files in channels/ on branch {self.control_branch!r} of "
                f"{self.repo.location}"
            )
        return channels

    @cached_property
    def layout(self) -> Layout:
        """The repository's layout, from `clmgit.yaml` on the control branch (default: clmgit's)."""
        data = self.repo.read_file(self.control_sha, SETTINGS_PATH)
        return parse_settings(data, f"{SETTINGS_PATH} on branch {self.control_branch!r}")

    @cached_property
    def sources(self) -> Sources:
        """The config sources `clmgit.yaml` lists (default: this repository alone, `main`)."""
        where = f"{SETTINGS_PATH} on branch {self.control_branch!r}"
        return parse_sources(load_settings(self.repo.read_file(self.control_sha, SETTINGS_PATH),
                                           where), where)

    @cached_property
    def source_repos(self) -> SourceRepos:
        return SourceRepos(self.sources, self.repo)

    def channel(self, name: str) -> Channel:
        try:
            return self.channels[name]
        except KeyError:
            known = ", ".join(self.channels)
            raise ConfigError(f"unknown channel {name!r} (channels: {known})") from None

    def channel_text(self, channel: Channel) -> str:
        data = self.repo.read_file(self.control_sha, channel.path)
        assert data is not None
        return data.decode()

    def head(self, channel: Channel) -> str:
        """The commit at the head of a channel's branch."""
        sha = self.branch_head(channel.branch)
        if sha is None:
            raise GitError(f"branch {channel.branch!r} does not exist in {self.location}")
        return sha

    def branch_head(self, branch: str) -> str | None:
        """Where a branch is as the plan sees it (read once); None if it does not exist."""
        if branch not in self._heads:
            self._heads[branch] = self._read_head(branch)
        return self._heads[branch]

    def _read_head(self, branch: str) -> str | None:
        sha, from_remote = read_branch(self.repo, branch, self.remote)
        if from_remote:
            self._from_remote.add(branch)
        return sha

    def local_updates(self, updates: Sequence[RefUpdate]) -> list[RefUpdate]:
        """The local side of `updates`: the plan was made on the local branches, so the same,
        except that a branch read from the remote (it has no local branch) is created where it
        moves to."""
        return [
            RefUpdate(u.ref, u.new, None, u.replaceable)
            if u.ref.removeprefix("refs/heads/") in self._from_remote else u
            for u in updates
        ]

    @cached_property
    def registry(self) -> Registry:
        return open_registry(self.registry_spec, default_dir=self.repo.workdir)

    @cached_property
    def clusters(self) -> list[Cluster]:
        return self.registry.clusters()

    def cluster(self, name: str) -> Cluster:
        """A registry record by id or alias."""
        for c in self.clusters:
            if name in (c.id, c.alias):
                return c
        raise ConfigError(f"no cluster {name!r} in the registry {self.registry.location}")

    def origin_url(self) -> str | None:
        """The URL of the remote the workspace pushes to (None: the repository has none)."""
        if not self.repo.has_remote(self.remote):
            return None
        return self.repo.run("remote", "get-url", self.remote).strip()

    def pinned_sha(self, cluster: Cluster) -> tuple[str | None, str]:
        """(desired SHA, group name) of a cluster; SHA None with a reason when it has none.
        With declared config sources the "SHA" is the config version (`main=<sha>;...`)."""
        if self.sources.declared:
            return desired_config_version(self.channels, cluster, self.sources,
                                          self.source_repos)
        return pinned_sha(self.channels, cluster, self.head)


def pinned_sha(channels: Mapping[str, Channel], cluster: Cluster,
               head: Callable[[Channel], str]) -> tuple[str | None, str]:
    """(desired SHA, group name) of a cluster under `channels`; SHA None with a reason when it
    has none. `head` gives the commit an unpinned channel follows."""
    channel = channels.get(cluster.channel)
    if channel is None:
        return None, f"unknown channel {cluster.channel!r}"
    if not channel.pinned:
        return head(channel), ""
    group = channel.group_for(cluster)
    if group is None:
        return None, f"no group of channel {channel.name!r} matches"
    if group.sha is None:
        return None, f"group {group.name!r} of channel {channel.name!r} has no pin yet"
    return group.sha, group.name


def read_branch(repo: GitRepo, branch: str, remote: str = "origin") -> tuple[str | None, bool]:
    """(sha, read from the remote): the local branch; without one, the remote's — in a plain
    `git clone` only the default branch is local and the channel branches exist as
    `origin/<channel>` alone."""
    local = repo.branch_sha(branch)
    if local is not None:
        return local, False
    remote_sha = repo.rev(f"refs/remotes/{remote}/{branch}")
    return remote_sha, remote_sha is not None


def open_workspace(
    repo: str, *, registry: str | None = None, control_branch: str = "main"
) -> Workspace:
    """Open the config repo at a path, or a local mirror of it for a git URL.

    A URL is mirrored under ~/.cache/clmgit and fetched on every open; its branches are the
    remote's, so a change made there only counts once pushed (use --push).
    """
    if is_url(repo):
        return Workspace(_mirror(repo), control_branch=control_branch, registry_spec=registry,
                         url=repo)
    return Workspace(GitRepo(repo), control_branch=control_branch, registry_spec=registry)


def _mirror(url: str) -> GitRepo:
    """The repository at `url`, as a bare mirror in the cache, fetched now."""
    import hashlib

    from clmgit.cache import cache_dir

    cache = cache_dir("repos")
    cache.mkdir(parents=True, exist_ok=True)
    return GitRepo.mirror(url, cache / hashlib.sha256(url.encode()).hexdigest()[:16])


# --- the repositories of several config sources (`sources:` in clmgit.yaml) ----------------------


class SourceRepos:
    """The repository of each source: this one, a path, or a mirror of a URL fetched on first
    use (keyed by the source's name, so two sources never share a mirror)."""

    def __init__(self, sources: Sources, control: GitRepo, *,
                 mirror: Callable[[str, str], GitRepo] | None = None) -> None:
        self.sources = sources
        self._control = control
        self._mirror = mirror or mirror_source
        self._repos: dict[str, GitRepo] = {}
        self._lock = threading.Lock()

    def repo(self, name: str) -> GitRepo:
        with self._lock:
            if name not in self._repos:
                self._repos[name] = self._open(self.sources.get(name))
            return self._repos[name]

    def url(self, name: str) -> str | None:
        spec = self.sources.get(name).repo
        return spec if spec is not None and is_url(spec) else None

    def _open(self, source: Source) -> GitRepo:
        if source.repo is None:
            return self._control
        check_source_repo(source, self._control.workdir)
        try:
            if is_url(source.repo):
                return self._mirror(source.name, source.repo)
            if not Path(source.repo).exists():
                raise GitError(f"{source.repo} does not exist")
            return GitRepo(source.repo)
        except GitError as e:
            raise GitError(f"config source {source.name!r} cannot be read: {e}") from None

    def head(self, name: str, branch: str) -> str:
        """Where `branch` is in the source's repository (the remote's in a plain clone)."""
        sha, _ = read_branch(self.repo(name), branch)
        if sha is None:
            raise GitError(f"config source {name!r} has no branch {branch!r}")
        return sha

    def resolve(self, name: str, rev: str) -> str:
        """A revision (a branch, a tag, a SHA) of a source as a commit id."""
        repo = self.repo(name)
        sha = repo.branch_sha(rev) or repo.rev(f"refs/remotes/origin/{rev}") or repo.rev(
            f"{rev}^{{commit}}")
        if sha is None:
            raise GitError(f"config source {name!r} has no revision {rev!r}")
        return sha


def is_url(spec: str) -> bool:
    return "://" in spec or (spec.startswith("git@") and ":" in spec)


def mirror_source(name: str, url: str) -> GitRepo:
    """A bare mirror of a source's URL in the cache, fetched now; keyed by the source's name
    (and the URL, so that a source pointed elsewhere starts a new mirror)."""
    from clmgit.cache import cache_dir

    folder = cache_dir("sources")
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return GitRepo.mirror(url, folder / f"{name}-{digest}")


# --- a cluster's desired version under declared config sources ---------------------------------


def desired_config_version(
    channels: Mapping[str, Channel], cluster: Cluster, sources: Sources, repos: SourceRepos,
) -> tuple[str | None, str]:
    """(config version, group) of a cluster under several sources (or one declared source):
    per source its group's pin (a channel without groups: the head of the source's branch),
    unless `override_channel` points the source at another revision. None with a reason when
    a source has no pin."""
    channel = channels.get(cluster.channel)
    if channel is None:
        return None, f"unknown channel {cluster.channel!r}"
    try:
        overrides = channel_overrides(cluster, sources.names)
    except ConfigError as e:
        return None, str(e)  # this cluster is held back, saying why; the others go on
    group_name = ""
    pins: dict[str, str] | None = None
    if channel.pinned:
        group = channel.group_for(cluster)
        if group is None:
            return None, f"no group of channel {channel.name!r} matches"
        group_name, pins = group.name, group_pins(group, sources)
        if pins is None and len(overrides) < len(sources.sources):
            return None, (f"group {group.name!r} of channel {channel.name!r} has no pin of "
                          f"every source ({', '.join(sources.names)}) yet")
    shas = []
    for s in sources.sources:
        if s.name in overrides:
            sha = repos.resolve(s.name, overrides[s.name])
        elif pins is not None:
            sha = pins[s.name]
        else:
            sha = repos.head(s.name, s.branch(channel))
        shas.append((s.name, sha))
    return config_version(shas), group_name
