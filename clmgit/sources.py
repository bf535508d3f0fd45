"""Several config sources per cluster (CLM's `--config-source`): their declaration in
`clmgit.yaml`, their repositories, the version string and `override_channel`.

`clmgit.yaml` on the control branch may list ordered `sources:`; the first is the *main* source.
A source without `repo:` is this repository; one with a URL is mirrored under the cache, keyed by
its name, and fetched when first read; one with a path is read where it is. Without `sources:`
the repository is its own single source named `main`, and nothing below changes how it behaves.

The config version of a cluster is CLM's `ConfigVersion.ID()`: one source, its SHA; two or more,
`name1=sha1;name2=sha2` in source order (channel/combined.go). `override_channel`
(`src1=rev1,src2=rev2`) points a source at another revision for one cluster; clmgit validates it
where CLM does not (names are not trimmed, unknown names and empty revisions are refused).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clmgit.errors import ConfigError, GitError
from clmgit.model import SHA_RE, Cluster

if TYPE_CHECKING:
    from clmgit.adapters.git import GitRepo
    from clmgit.channels import Channel, Group

MAIN = "main"
NAME_RE = re.compile(r"^[a-z0-9-]+$")
#: CLM's config item that points a cluster's sources at other revisions.
OVERRIDE_ITEM = "override_channel"
SOURCE_KEYS = ("sources", "allow_override")
_SOURCE_FIELDS = ("name", "repo", "branches")


@dataclass(frozen=True)
class Source:
    name: str
    #: A git URL or a path; None: this repository (the control branch's).
    repo: str | None = None
    #: Channel name -> this source's branch for it (default: the channel's own branch).
    branches: Mapping[str, str] = field(default_factory=dict)

    def branch(self, channel: Channel) -> str:
        return self.branches.get(channel.name, channel.branch)


@dataclass(frozen=True)
class Sources:
    """The ordered config sources of a repository; `declared` only when `clmgit.yaml` lists
    them (a repository without the key is its own source and behaves exactly as before)."""

    sources: tuple[Source, ...] = (Source(MAIN),)
    declared: bool = False
    #: `Kind/namespace/name` and `stack/<name>` entries two sources may both define.
    allow_override: frozenset[str] = frozenset()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sources)

    @property
    def main(self) -> Source:
        return self.sources[0]

    @property
    def several(self) -> bool:
        return len(self.sources) > 1

    def get(self, name: str) -> Source:
        for s in self.sources:
            if s.name == name:
                return s
        raise ConfigError(f"unknown config source {name!r} (sources: {', '.join(self.names)})")


SINGLE = Sources()


def parse_sources(raw: Mapping[str, Any], where: str) -> Sources:
    """The `sources:` and `allow_override:` keys of the settings (already a mapping)."""
    allow = _allow_override(raw.get("allow_override"), where)
    if "sources" not in raw:
        return Sources(allow_override=allow)
    items = raw["sources"]
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{where}: key 'sources' must be a non-empty list of sources "
                          "(each with a name)")
    sources = tuple(_source(item, i, where) for i, item in enumerate(items))
    seen: set[str] = set()
    local = 0
    for s in sources:
        if s.name in seen:
            raise ConfigError(f"{where}: source {s.name!r} is listed twice; names are unique")
        seen.add(s.name)
        local += s.repo is None
    if local > 1:
        raise ConfigError(f"{where}: only one source may leave out 'repo' (this repository)")
    if len(sources) == 1 and sources[0].repo is not None:
        raise ConfigError(f"{where}: a single source is this repository; leave out its 'repo'")
    return Sources(sources, declared=True, allow_override=allow)


def _source(item: Any, index: int, where: str) -> Source:
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where}: source #{index + 1} must be a mapping with a name")
    unknown = sorted(str(k) for k in item if k not in _SOURCE_FIELDS)
    if unknown:
        raise ConfigError(f"{where}: source #{index + 1} has unknown key {unknown[0]!r} "
                          f"(known keys: {', '.join(_SOURCE_FIELDS)})")
    name = item.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ConfigError(f"{where}: source #{index + 1} needs a name of [a-z0-9-]+, "
                          f"not {name!r}")
    repo = item.get("repo")
    if repo is not None and (not isinstance(repo, str) or not repo.strip()):
        raise ConfigError(f"{where}: source {name!r}: repo must be a URL or a path")
    branches = item.get("branches") or {}
    if not isinstance(branches, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in branches.items()):
        raise ConfigError(f"{where}: source {name!r}: branches must map channel names to "
                          "branch names")
    return Source(name, repo, dict(branches))


def _allow_override(raw: Any, where: str) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
        raise ConfigError(f"{where}: key 'allow_override' must be a list such as "
                          "[Deployment/kube-system/app, stack/<stack name>]")
    return frozenset(raw)


# --- the version string --------------------------------------------------------------------------


def config_version(shas: Sequence[tuple[str, str]]) -> str:
    """CLM's config version of (source, sha) pairs in source order: one source, its SHA."""
    if len(shas) == 1:
        return shas[0][1]
    return ";".join(f"{name}={sha}" for name, sha in shas)


def split_config_version(version: str, sources: Sources) -> dict[str, str]:
    """{source: sha} of a config version made by `config_version` for `sources`."""
    if not sources.several:
        return {sources.main.name: version}
    parts = dict(p.partition("=")[::2] for p in version.split(";"))
    if list(parts) != list(sources.names) or not all(SHA_RE.match(s) for s in parts.values()):
        raise ConfigError(f"config version {version!r} does not name the sources "
                          f"{', '.join(sources.names)} with a SHA each")
    return parts


def channel_overrides(cluster: Cluster, sources: Sources) -> dict[str, str]:
    """`override_channel` of a cluster as {source: revision}, validated (CLM splits it on ','
    and '=' and ignores what it does not know; clmgit refuses it, naming the cluster)."""
    raw = cluster.config_items.get(OVERRIDE_ITEM)
    if raw is None:
        return {}
    who = f"cluster {cluster.alias or cluster.id}: config item {OVERRIDE_ITEM}"
    out: dict[str, str] = {}
    for part in raw.split(","):
        name, sep, rev = part.partition("=")
        if not sep:
            raise ConfigError(f"{who}: {part!r} is not source=revision")
        if name not in sources.names:
            raise ConfigError(f"{who}: {name!r} is not a config source "
                              f"(sources: {', '.join(sources.names)}; names are not trimmed)")
        if not rev.strip():
            raise ConfigError(f"{who}: source {name!r} has an empty revision")
        if name in out:
            raise ConfigError(f"{who}: source {name!r} is named twice")
        out[name] = rev
    return out


def group_pins(group: Group, sources: Sources) -> dict[str, str] | None:
    """{source: sha} a group is pinned to; None when it lacks a pin for any source."""
    if not sources.several:
        return {sources.main.name: group.sha} if group.sha else None
    pins = dict(group.pins)
    return pins if set(pins) == set(sources.names) else None


# --- the repositories of the sources -------------------------------------------------------------


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
        from clmgit.adapters.git import GitRepo

        if source.repo is None:
            return self._control
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
        from clmgit.workspace import read_branch

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
    from clmgit.adapters.git import GitRepo
    from clmgit.cache import cache_dir

    folder = cache_dir("sources")
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return GitRepo.mirror(url, folder / f"{name}-{digest}")


# --- a cluster's desired version -----------------------------------------------------------------


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
    overrides = channel_overrides(cluster, sources)
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
