"""A config repository's layout, chosen by `clmgit.yaml` at the top of the control branch.

`layout: clmgit` (the default, also when the file is missing) is clmgit's own layout
(docs/reference/config-repo.md). `layout: clm` reads `cluster/` the way Zalando's Cluster
Lifecycle Manager does and names, tags and orders the CloudFormation stacks as CLM does, so that
clmgit takes over clusters CLM created instead of making a second set of stacks:

- the main stack from `cluster/cluster.yaml`, named `<local_id>`;
- the etcd stack from `cluster/etcd/stack.yaml` (provider `zalando-aws` only, as CLM's
  `--manage-etcd-stack`; `manage_etcd_stack: false` turns it off), named by the config item
  `etcd_stack_name` (default `etcd-cluster-etcd`), applied before the main stack;
- `cf-manifests/*` stacks named by their template's `Metadata.StackName`;
- node-pool stacks `nodepool-<pool>-<id with ':' as '-'>`, master pools first; pools of profile
  `worker-karpenter` get no stack: their `provisioners.yaml` is applied to the cluster.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clmgit import yamlsafe
from clmgit.errors import ConfigError
from clmgit.healthstate import HealthPolicy, parse_policy

SETTINGS_PATH = "clmgit.yaml"
CLMGIT = "clmgit"
CLM = "clm"
LAYOUTS = (CLMGIT, CLM)


@dataclass(frozen=True)
class Layout:
    name: str = CLMGIT
    #: CLM's `--manage-etcd-stack`: apply `cluster/etcd/stack.yaml` (layout `clm` only).
    manage_etcd_stack: bool = True
    #: `health_checks:`: where the health gate's HTTP checks may go.
    health: HealthPolicy = HealthPolicy()

    @property
    def clm(self) -> bool:
        return self.name == CLM


DEFAULT = Layout()
CLM_LAYOUT = Layout(CLM)


def parse_settings(data: bytes | None, where: str = SETTINGS_PATH) -> Layout:
    """The layout `clmgit.yaml` selects; the default when there is no such file. Anything
    malformed is refused with one sentence naming the file and the key. The keys of config
    sources (`sources`, `allow_override`) are read by `parse_sources`."""
    raw = load_settings(data, where)
    if not raw:
        return DEFAULT
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known keys: layout, "
                          "manage_etcd_stack, health_checks, aws, notify, signing) nor a key of "
                          "config sources (sources, allow_override)")
    name = raw.get("layout", CLMGIT)
    if name not in LAYOUTS:
        raise ConfigError(f"{where}: key 'layout' must be one of {', '.join(LAYOUTS)}, "
                          f"not {name!r}")
    from clmgit.notify import parse_notify  # refused with the other keys, before any work

    parse_notify(raw.get("notify"), where)
    etcd = raw.get("manage_etcd_stack", True)
    if not isinstance(etcd, bool):
        raise ConfigError(f"{where}: key 'manage_etcd_stack' must be true or false, "
                          f"not {etcd!r}")
    return Layout(name, manage_etcd_stack=etcd,
                  health=parse_policy(raw.get("health_checks"), where))


_KEYS = ("layout", "manage_etcd_stack", "health_checks", "sources", "allow_override", "aws",
         "notify", "signing")


def load_settings(data: bytes | None, where: str = SETTINGS_PATH) -> dict[str, Any]:
    """`clmgit.yaml` as a mapping ({} when there is none), or one sentence on what is wrong."""
    if data is None:
        return {}
    try:
        raw: Any = yamlsafe.load(data, where, getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(f"{where} is not valid YAML{line}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a mapping of settings, such as 'layout: clm'")
    return raw


# --- config sources (CLM's `--config-source`) ----------------------------------------------------
#
# `sources:` lists ordered config sources; the first is the *main* source. A source without
# `repo:` is this repository; one with a URL is mirrored under the cache, keyed by its name
# (`clmgit.workspace.SourceRepos`); one with a path is read where it is. Without `sources:` the
# repository is its own single source named `main`, and nothing changes how it behaves.
#
# `clmgit.yaml` arrives by pull request, so `repo:` is data: a URL of a scheme git's transport
# policy allows, or a path outside the config repo's working tree (`check_source_repo`) — a
# repository inside it would be one the pull request wrote, its config and hooks included.

MAIN = "main"
NAME_RE = re.compile(r"[a-z0-9-]+")  # whole names only: `fullmatch`
URL_SCHEMES = ("https", "ssh", "git", "file")
_SOURCE_FIELDS = ("name", "repo", "branches")


@dataclass(frozen=True)
class Source:
    name: str
    #: A git URL or a path; None: this repository (the control branch's).
    repo: str | None = None
    #: Channel name -> this source's branch for it (default: the channel's own branch).
    branches: Mapping[str, str] = field(default_factory=dict)

    def branch(self, channel: str, branch: str) -> str:
        """This source's branch for a channel (`channel` and its own `branch`)."""
        return self.branches.get(channel, branch)


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
    names = [s.name for s in sources]
    twice = [name for i, name in enumerate(names) if name in names[:i]]
    if twice:
        raise ConfigError(f"{where}: source {twice[0]!r} is listed twice; names are unique")
    if sum(s.repo is None for s in sources) > 1:
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
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ConfigError(f"{where}: source #{index + 1} needs a name of [a-z0-9-]+, "
                          f"not {name!r}")
    repo = item.get("repo")
    if repo is not None:
        _check_repo_spec(repo, f"{where}: source {name!r}")
    branches = item.get("branches") or {}
    if not isinstance(branches, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in branches.items()):
        raise ConfigError(f"{where}: source {name!r}: branches must map channel names to "
                          "branch names")
    return Source(name, repo, dict(branches))


def _check_repo_spec(repo: Any, where: str) -> None:
    """A source's `repo:` is a URL of `URL_SCHEMES`, `user@host:path` or a path; nothing that
    git would read as an option or as a `transport::address` (a command to run)."""
    from clmgit.redact import redact

    if not isinstance(repo, str) or not repo.strip():
        raise ConfigError(f"{where}: repo must be a URL or a path")
    scheme, sep, _ = repo.partition("://")
    if repo.startswith("-") or "::" in (scheme if sep else repo) or not repo.isprintable():
        raise ConfigError(f"{where}: repo {redact(repo)!r} is neither a URL nor a path")
    if sep and scheme.lower() not in URL_SCHEMES:
        raise ConfigError(f"{where}: repo {redact(repo)!r} has scheme {scheme!r}; a source "
                          f"is a path or a URL of {', '.join(URL_SCHEMES)}")


def source_path(repo: str) -> Path | None:
    """The local path a source's `repo:` names (a path or a `file://` URL); None for a remote."""
    scheme, sep, rest = repo.partition("://")
    if not sep:
        return None if repo.startswith("git@") and ":" in repo else Path(repo)
    return Path(rest) if scheme.lower() == "file" else None


def check_source_repo(source: Source, workdir: Path | None) -> None:
    """Refuse a source whose repository lies inside the config repo's working tree (`workdir`):
    its files, `config` and hooks would be whatever a pull request committed there."""
    path = source_path(source.repo) if source.repo is not None else None
    if path is None or workdir is None:
        return
    if path.resolve().is_relative_to(workdir.resolve()):
        raise ConfigError(
            f"config source {source.name!r}: {source.repo} lies inside the config repo's "
            f"working tree ({workdir}); name a repository outside it or by URL")


def _allow_override(raw: Any, where: str) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
        raise ConfigError(f"{where}: key 'allow_override' must be a list such as "
                          "[Deployment/kube-system/app, stack/<stack name>]")
    return frozenset(raw)


