"""The versions port: what promotion and the report ask about config versions.

A config version is a pin {source: sha} (`clmgit.channels.Pins`); with one source it is one
commit. `Versions` answers, for one source or many alike: resolve a commit, the head of a
channel, containment (is this pin in that one), the log between two versions, commit times, and
which version a cluster applied. Git is asked through it alone, and it keeps the answers (the
ancestry questions repeat thousands of times in a fleet's status), so no caller keeps a cache.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from clmgit.adapters.git import SHORT_SHA_RE, Commit, GitRepo
from clmgit.channels import Channel, Pins, named, pin_version
from clmgit.errors import ConfigError, GitError
from clmgit.layout import Sources
from clmgit.model import SHA_RE, Cluster, parse_version, split_config_version
from clmgit.timestamps import parse_timestamp

CONFIG_DIR = "cluster/"


@dataclass(frozen=True)
class Log:
    """The commits to `cluster/` between two versions, newest first per source (a source's
    subjects start with its name when there are several), and how many there are in all."""

    commits: tuple[Commit, ...]
    total: int


class Versions:
    """The port over the workspace's repositories: `repo(name)` opens a source's repository,
    `branch(name, branch)` reads where a branch of it is (None: there is no such branch)."""

    def __init__(self, sources: Sources, repo: Callable[[str], GitRepo],
                 branch: Callable[[str, str], str | None]) -> None:
        self.sources = sources
        self.names = sources.names
        self.repo = repo
        self._branch = branch
        self._contains: dict[tuple[str, str, str], bool] = {}
        self._applied: dict[str, Pins | None] = {}

    def version(self, pins: Pins) -> str:
        return pin_version(pins)

    def named(self, source: str, sentence: str) -> str:
        return named(self.names, source, sentence)

    def branch_name(self, source: str, channel: Channel) -> str:
        return self.sources.get(source).branch(channel.name, channel.branch)

    def branch(self, source: str, branch: str) -> str | None:
        return self._branch(source, branch)

    def head(self, channel: Channel) -> dict[str, str]:
        """The head of the channel's branch in every source."""
        heads = {}
        for name in self.names:
            branch = self.branch_name(name, channel)
            sha = self._branch(name, branch)
            if sha is None:
                where = self.repo(name).location
                raise GitError(f"branch {branch!r} does not exist in {where}"
                               if len(self.names) == 1 else
                               f"config source {name!r} has no branch {branch!r}")
            heads[name] = sha
        return heads

    def complete(self, channel: Channel, pins: Pins) -> dict[str, str]:
        """`pins` with each source it does not name at the head of that source's branch for
        the channel: a pin written before a source was added, as the channel's clusters would
        read it (docs/how-to/several-config-sources.md)."""
        missing = [n for n in self.names if n not in pins]
        heads = self.head(channel) if missing else {}
        return {n: pins[n] if n in pins else heads[n] for n in self.names}

    def resolve(self, source: str, ref: str) -> str:
        """The full id of the commit `ref` abbreviates in a source. A tag's id is refused, not
        peeled: a pin names a commit, and the user should see which one they are pinning."""
        if not SHORT_SHA_RE.match(ref):
            raise ConfigError(self.named(source, f"{ref!r} is not a commit SHA"))
        repo = self.repo(source)
        oid = repo.object_id(ref)
        kind = repo.object_types([oid])[oid] if oid else None
        if oid is None or kind is None:
            raise GitError(self.named(source, f"commit {ref} does not exist in {repo.location}"))
        if kind != "commit":
            raise ConfigError(self.named(source, f"{ref} is {repo.describe_object(oid, kind)}, "
                                                 "not a commit; pass the commit id"))
        return oid

    def is_ancestor(self, source: str, old: str, new: str) -> bool:
        """`old` is `new` or behind it in git's history (False if `old` is not there)."""
        key = (source, old, new)
        if key not in self._contains:
            repo = self.repo(source)
            self._contains[key] = (bool(SHA_RE.match(old)) and repo.rev(old) is not None
                                   and repo.is_ancestor(old, new))
        return self._contains[key]

    def contains(self, old: Pins, new: Pins) -> bool:
        """Every source's commit of `new` is, or is ahead of, that of `old`."""
        return all(self.is_ancestor(n, old[n], new[n]) for n in new if n in old)

    def same_content(self, source: str, a: str, b: str) -> bool:
        repo = self.repo(source)
        return a == b or repo.subtree(a, CONFIG_DIR) == repo.subtree(b, CONFIG_DIR)

    def commit_time(self, pins: Pins) -> datetime:
        """The newest commit time of the version's commits."""
        times = [parse_timestamp(self.repo(n).commit_time(sha)) for n, sha in pins.items()]
        return max(t for t in times if t is not None)

    def pins(self, version: str | None) -> Pins | None:
        """A config version as a pin (None: none, or one of other sources)."""
        if not version:
            return None
        if version not in self._applied:
            try:
                pins = split_config_version(version, self.names)
            except ConfigError:
                pins = {}
            self._applied[version] = pins if pins and all(pins.values()) else None
        return self._applied[version]

    def applied(self, cluster: Cluster) -> Pins | None:
        """The version a cluster applied, as a pin (None: nothing, or other sources)."""
        return self.pins(parse_version(cluster.status.current_version)[0])

    def has_applied(self, cluster: Cluster, pins: Pins) -> bool:
        """The cluster applied `pins` or a version that contains it, in every source."""
        applied = self.applied(cluster)
        return applied is not None and all(
            self.is_ancestor(n, sha, applied[n]) for n, sha in pins.items())

    def log(self, new: Pins, bases: Sequence[Pins], *, limit: int,
            from_start: bool = False) -> Log:
        """The commits to `cluster/` that `new` brings over those of `bases` that are behind it,
        at most `limit` per source; a source with no base behind it brings its whole history
        with `from_start`, else nothing."""
        commits: list[Commit] = []
        total = 0
        for name, sha in new.items():
            behind = sorted({p[name] for p in bases if self.is_ancestor(name, p[name], sha)})
            if not behind and not from_start:
                continue
            revs = [sha, *(f"^{b}" for b in behind)]
            repo = self.repo(name)
            found = repo.log(revs, paths=[CONFIG_DIR], limit=limit + 1)
            prefix = f"{name}: " if len(self.names) > 1 else ""
            commits += [Commit(c.sha, prefix + c.subject, c.author, c.date)
                        for c in found[:limit]]
            total += (repo.count(revs, paths=[CONFIG_DIR]) if len(found) > limit
                      else len(found))
        return Log(tuple(commits), total)

    def count(self, old: Pins | None, new: Pins) -> int:
        """How many commits to `cluster/` `new` has that `old` has not."""
        return sum(self.repo(n).count([sha, *([f"^{old[n]}"] if old else [])],
                                      paths=[CONFIG_DIR]) for n, sha in new.items())


def parse_pins(values: Sequence[str], names: Sequence[str], option: str = "--sha"
               ) -> dict[str, str]:
    """`--sha SOURCE=SHA` (repeatable) as {source: sha}; a bare SHA only with one source."""
    out: dict[str, str] = {}
    for value in values:
        name, sep, sha = value.rpartition("=")
        if not sep:
            if len(names) > 1:
                raise ConfigError(f"{option} {value}: name the source, as source=sha "
                                  f"(sources: {', '.join(names)})")
            name, sha = names[0], value
        if name not in names:
            raise ConfigError(f"unknown config source {name!r} (sources: {', '.join(names)})")
        if name in out:
            raise ConfigError(f"{option} names source {name!r} twice" if len(names) > 1
                              else f"{option}: one SHA, the repository has one config source")
        out[name] = sha
    return out
