"""The workspace a command runs in: the config repo, its control branch, channels and registry.

Built once by the CLI and passed down; everything is read lazily and at most once.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from clmgit.adapters.git import GitRepo, RefUpdate
from clmgit.channels import Channel, Group, load_channels
from clmgit.errors import ConfigError, GitError, RefusedError
from clmgit.layout import (
    MAIN,
    SETTINGS_PATH,
    SINGLE,
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
from clmgit.versions import Versions


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
    _versions_by_group: VersionMemo = field(default_factory=dict, repr=False)

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
                                 control_branch=self.control_branch, sources=self.sources.names)
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

    def write(self, *, files: Mapping[str, str], message: str,
              updates: Sequence[RefUpdate] = (), push: bool = False,
              ours: Sequence[str] = ()) -> str | None:
        """Commit `files` with `message` on top of the control branch (when either is given)
        and move it and the refs of `updates` with it; with `push`, send all of it to the
        remote in one atomic push first. `ours` are files among `files` whose uncommitted
        changes in the checkout are clmgit's own and exactly what is committed (the file
        registry's state). The commit made, or None."""
        repo, target = self.repo, self.control_branch
        if self.url is not None and not push:
            # A mirror's refs are the remote's and the next fetch resets them: a change kept
            # only there would be reported as done and then silently lost.
            raise RefusedError("a URL repo is written only with --push")
        if files and repo.current_branch() == target:  # no paths would mean every path
            dirty = [p for p in repo.dirty(files) if p not in ours]
            if dirty:
                raise RefusedError(f"{', '.join(dirty)} has uncommitted changes in "
                                   f"{repo.location}; commit or stash them first")
        commit = None
        moved = list(updates)
        if files or message:  # a message alone records what moved (sync-branches --force)
            commit = repo.make_commit(self.control_sha,
                                      {p: t.encode() for p, t in files.items()}, message)
            moved.insert(0, RefUpdate(f"refs/heads/{target}", commit, self.control_sha))
        if push and moved:
            if not repo.has_remote(self.remote):
                raise RefusedError(f"{repo.location} has no remote {self.remote!r} to push to")
            repo.push(self.remote, moved)
            # Landed. A kill or a refusal from here on leaves the local side behind the remote,
            # which the next --push run (planned on the remote) finds done and catches up.
        if moved or push:  # nothing moved: a --push run still catches the local side up
            repo.update_refs(self.local_updates(moved), ours=ours)
        return commit

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

    @cached_property
    def versions(self) -> Versions:
        """The versions port over this repository and the other config sources'."""
        # A weak reference: the workspace holds the port, and a cycle would keep both (and the
        # repositories' git processes) alive until a collection.
        workspace = weakref.ref(self)

        def branch(source: str, name: str) -> str | None:
            ws = workspace()
            assert ws is not None
            return ws._source_branch(source, name)

        return Versions(self.sources, self.source_repos.repo, branch)

    def _source_branch(self, source: str, branch: str) -> str | None:
        if self.sources.get(source).repo is None:
            return self.branch_head(branch)
        key = f"{source}\0{branch}"
        if key not in self._heads:
            self._heads[key] = read_branch(self.source_repos.repo(source), branch)[0]
        return self._heads[key]

    def pinned_sha(self, cluster: Cluster) -> tuple[str | None, str]:
        """(desired config version, group name) of a cluster — with one source its pinned SHA;
        None with a reason when it has none."""
        return desired_version(self.channels, cluster, self.sources, self.versions.head,
                               self.source_repos.resolve, self._versions_by_group)


#: `desired_version`'s answers by (channel, group, overrides): the clusters of a group share one.
VersionMemo = dict[tuple[str, str, tuple[tuple[str, str], ...]], tuple[str | None, str]]


def desired_version(channels: Mapping[str, Channel], cluster: Cluster, sources: Sources,
                    heads: Callable[[Channel], Mapping[str, str]],
                    resolve: Callable[[str, str], str],
                    memo: VersionMemo | None = None) -> tuple[str | None, str]:
    """(config version, group) of a cluster: per source its group's pin (a channel without
    groups: the head of the source's branch), unless `override_channel` points the source at
    another revision (only where `clmgit.yaml` declares the sources). None with a reason when
    a source has no pin. `memo` keeps the answers of one reading of the channels."""
    channel = channels.get(cluster.channel)
    if channel is None:
        return None, f"unknown channel {cluster.channel!r}"
    try:
        overrides = channel_overrides(cluster, sources.names) if sources.declared else {}
    except ConfigError as e:
        return None, str(e)  # this cluster is held back, saying why; the others go on
    group = channel.group_for(cluster) if channel.pinned else None
    if channel.pinned and group is None:
        return None, f"no group of channel {channel.name!r} matches"
    if memo is None:
        return _version(channel, group, overrides, sources, heads, resolve)
    key = (channel.name, group.name if group else "", tuple(overrides.items()))
    if key not in memo:
        memo[key] = _version(channel, group, overrides, sources, heads, resolve)
    return memo[key]


def _version(channel: Channel, group: Group | None, overrides: Mapping[str, str],
             sources: Sources, heads: Callable[[Channel], Mapping[str, str]],
             resolve: Callable[[str, str], str]) -> tuple[str | None, str]:
    group_name = ""
    pins: Mapping[str, str] | None = None
    if group is not None:
        group_name, pins = group.name, channel.pins_of(group)
        if pins is None and len(overrides) < len(sources.sources):
            return None, _no_pin(channel, group.name, group.pins, sources)
    if pins is None and len(overrides) < len(sources.sources):
        pins = heads(channel)
    shas = [(n, resolve(n, overrides[n]) if n in overrides else (pins or {})[n])
            for n in sources.names]
    return config_version(shas), group_name


def _no_pin(channel: Channel, group: str, pins: Mapping[str, str], sources: Sources) -> str:
    """Why a group's clusters have no version: no pin, or one written before a source was
    added (`clmgit sources add` pins a source as it adds it)."""
    where = f"group {group!r} of channel {channel.name!r}"
    missing = [n for n in sources.names if n not in pins]
    if not pins or not sources.several:
        return f"{where} has no pin yet"
    return (f"{where} has no pin of source {', '.join(map(repr, missing))} yet; "
            f"promote into {channel.name!r} to pin every source")


def pinned_sha(channels: Mapping[str, Channel], cluster: Cluster,
               head: Callable[[Channel], str]) -> tuple[str | None, str]:
    """`desired_version` of a repository that is its own one source."""
    return desired_version(channels, cluster, SINGLE, lambda ch: {MAIN: head(ch)},
                           lambda _, rev: rev)


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


def desired_config_version(
    channels: Mapping[str, Channel], cluster: Cluster, sources: Sources, repos: SourceRepos,
) -> tuple[str | None, str]:
    """`desired_version` with the sources' repositories read anew."""
    def heads(ch: Channel) -> dict[str, str]:
        return {s.name: repos.head(s.name, s.branch(ch.name, ch.branch)) for s in sources.sources}

    return desired_version(channels, cluster, sources, heads, repos.resolve)
