"""Channel files (`channels/<name>.yaml` on the control branch): their model, validation and edits.

A channel is a git branch plus, optionally, groups of clusters pinned to commit SHAs. A cluster
belongs to the first group whose selector matches it; a channel with no groups follows its branch.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from clmgit import yamledit
from clmgit.durations import parse_duration
from clmgit.errors import ConfigError
from clmgit.healthstate import HealthGate, parse_gate
from clmgit.model import SHA_RE, Cluster, is_selector_key

if TYPE_CHECKING:
    from clmgit.adapters.git import GitRepo
    from clmgit.layout import Sources

CHANNELS_DIR = "channels"
DEFAULT_GROUP = "default"


@dataclass(frozen=True)
class Group:
    name: str
    selector: Mapping[str, str] = field(default_factory=dict)
    sha: str | None = None
    promoted_at: str = ""
    promoted_from: str = ""
    #: {source: sha} when the pin names several config sources (`sha:` a mapping); `sha` is
    #: then None, so that code that knows one source alone never reads half a pin.
    pins: Mapping[str, str] = field(default_factory=dict)

    def matches(self, cluster: Cluster) -> bool:
        return selector_matches(self.selector, cluster)


def selector_matches(selector: Mapping[str, str], cluster: Cluster) -> bool:
    """Every key of `selector` names a field of the cluster whose value matches its glob."""
    for key, pattern in selector.items():
        value = cluster.field_value(key)
        if value is None or not fnmatch.fnmatchcase(value, pattern):
            return False
    return True


@dataclass(frozen=True)
class Gates:
    applied_in_source: bool = False
    soak: timedelta | None = None
    #: "applied": a group is promoted only once the groups before it in the file (the canary)
    #: have applied the SHA; "healthy": once they run it healthy (for the stable_for of
    #: healthy_in_source, if set).
    groups_before: str | None = None
    #: Every running source cluster healthy on the SHA for `stable_for` (clmgit/healthstate.py).
    healthy_in_source: HealthGate | None = None


@dataclass(frozen=True)
class Channel:
    name: str
    branch: str
    path: str
    source: str | None = None
    frozen: bool = False
    freeze_reason: str = ""
    gates: Gates = Gates()
    groups: tuple[Group, ...] = ()

    @property
    def pinned(self) -> bool:
        return bool(self.groups)

    def group(self, name: str) -> Group:
        for g in self.groups:
            if g.name == name:
                return g
        known = ", ".join(g.name for g in self.groups) or "none"
        raise ConfigError(f"channel {self.name!r} has no group {name!r} (groups: {known})")

    def group_for(self, cluster: Cluster) -> Group | None:
        return next((g for g in self.groups if g.matches(cluster)), None)

    def select(self, names: Iterable[str]) -> tuple[Group, ...]:
        """The named groups in file order, or every group when no name is given."""
        names = list(dict.fromkeys(names))
        if not names:
            return self.groups
        wanted = {self.group(n).name for n in names}
        return tuple(g for g in self.groups if g.name in wanted)


# --- parsing -------------------------------------------------------------------------------------

def _str(value: Any) -> str:
    return "" if value is None else str(yamledit.normalize(value))


def parse_channel(name: str, text: bytes | str, path: str) -> Channel:
    raw = yamledit.load(text, path)
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{path}: a channel file must be a mapping")
    if raw.get("channel", name) != name:
        raise ConfigError(
            f"{path}: says channel {raw['channel']!r}, but the file is named {name!r}"
        )
    groups_raw = raw.get("groups") or []
    if not isinstance(groups_raw, list):
        raise ConfigError(f"{path}: groups must be a list")
    groups = tuple(_parse_group(g, f"{path}, group #{i + 1}") for i, g in enumerate(groups_raw))
    seen: set[str] = set()
    for g in groups:
        if g.name in seen:
            raise ConfigError(f"{path}: group {g.name!r} is defined twice")
        seen.add(g.name)
    gates_raw = raw.get("gates") or {}
    if not isinstance(gates_raw, Mapping):
        raise ConfigError(f"{path}: gates must be a mapping")
    unknown = set(gates_raw) - {"applied_in_source", "soak", "groups_before", "healthy_in_source"}
    if unknown:
        raise ConfigError(f"{path}: unknown gate {sorted(unknown)[0]!r}")
    soak = gates_raw.get("soak")
    groups_before = gates_raw.get("groups_before")
    if groups_before not in (None, "applied", "healthy"):
        raise ConfigError(f"{path}: gates.groups_before must be 'applied' or 'healthy', not "
                          f"{groups_before!r}")
    return Channel(
        name=name,
        branch=_str(raw.get("branch") or name),
        path=path,
        source=_str(raw.get("source")) or None,
        frozen=bool(raw.get("frozen", False)),
        freeze_reason=_str(raw.get("freeze_reason")),
        gates=Gates(
            applied_in_source=bool(gates_raw.get("applied_in_source", False)),
            soak=parse_duration(soak, where=f"{path}: gates.soak") if soak else None,
            groups_before=groups_before,
            healthy_in_source=parse_gate(gates_raw.get("healthy_in_source"), path),
        ),
        groups=groups,
    )


def _parse_group(raw: Any, where: str) -> Group:
    if not isinstance(raw, Mapping) or not raw.get("name"):
        raise ConfigError(f"{where}: every group needs a name")
    where = f"{where.rsplit(',', 1)[0]}, group {raw['name']!r}"
    selector = raw.get("selector") or {}
    if not isinstance(selector, Mapping):
        raise ConfigError(f"{where}: selector must be a mapping of field to glob")
    for key in selector:
        if not is_selector_key(str(key)):
            raise ConfigError(f"{where}: unknown selector key {key!r}")
    sha = raw.get("sha")
    pins: dict[str, str] = {}
    if isinstance(sha, Mapping):  # several config sources (clmgit.layout.Sources)
        pins, sha = {str(k): str(v) for k, v in sha.items()}, None
        for source, pin in pins.items():
            if not SHA_RE.match(pin):
                raise ConfigError(f"{where}: sha of source {source!r} must be a full 40-hex "
                                  f"commit SHA, not {pin!r}")
    elif sha is not None:
        sha = str(sha)
        if not SHA_RE.match(sha):
            raise ConfigError(f"{where}: sha must be a full 40-hex commit SHA, not {sha!r}")
    return Group(
        name=str(raw["name"]),
        selector={str(k): _str(v) for k, v in selector.items()},
        sha=sha,
        promoted_at=_str(raw.get("promoted_at")),
        promoted_from=_str(raw.get("promoted_from")),
        pins=pins,
    )


def group_pins(group: Group, sources: Sources) -> dict[str, str] | None:
    """{source: sha} a group is pinned to; None when it lacks a pin for any source."""
    if not sources.several:
        return {sources.main.name: group.sha} if group.sha else None
    pins = dict(group.pins)
    return pins if set(pins) == set(sources.names) else None


def channel_path(name: str) -> str:
    return f"{CHANNELS_DIR}/{name}.yaml"


def load_channels(repo: GitRepo, ref: str, *, control_branch: str) -> dict[str, Channel]:
    """Every channel file at `ref` of the control branch, validated together, in promotion order."""
    channels: dict[str, Channel] = {}
    for path in repo.list_files(ref, CHANNELS_DIR):
        if not path.endswith((".yaml", ".yml")) or path.count("/") != 1:
            continue
        name = path.rsplit("/", 1)[1].rsplit(".", 1)[0]
        data = repo.read_file(ref, path)
        assert data is not None
        channels[name] = parse_channel(name, data, path)
    for ch in channels.values():
        if ch.source is not None and ch.source not in channels:
            raise ConfigError(f"{ch.path}: source channel {ch.source!r} does not exist")
    check_branches(channels.values(), control_branch=control_branch)
    check_pins_are_commits(repo, channels.values())
    return {name: channels[name] for name in _promotion_order(channels)}


def check_branches(channels: Iterable[Channel], *, control_branch: str) -> None:
    """One channel per branch, none on the control branch.

    Two channels on one branch would move together: promoting one carries the other past its
    freeze and its gates. A channel on the control branch would let a branch move (and
    `sync-branches`) replace the pins themselves with `cluster/` content.
    """
    owners: dict[str, str] = {}
    for ch in channels:
        if ch.branch == control_branch:
            raise ConfigError(
                f"{ch.path}: branch {ch.branch!r} is the control branch, which holds the pins; "
                "give the channel a branch of its own"
            )
        if ch.branch in owners:
            raise ConfigError(
                f"{owners[ch.branch]} and {ch.path} both name branch {ch.branch!r}; "
                "each channel needs a branch of its own"
            )
        owners[ch.branch] = ch.path


def check_pins_are_commits(repo: GitRepo, channels: Iterable[Channel]) -> None:
    """A pin names a commit. An annotated tag's id looks like one, but a tag can be moved or
    re-made, and nothing below expects one; a tree or blob has no history at all. A pin this
    repository does not have yet passes: a fetch may bring it."""
    pinned = [(ch, g) for ch in channels for g in ch.groups if g.sha]
    kinds = repo.object_types([g.sha for _, g in pinned if g.sha])
    for ch, g in pinned:
        kind = kinds.get(g.sha or "")
        if kind not in (None, "commit"):
            raise ConfigError(
                f"{ch.path}, group {g.name!r}: sha {g.sha} is "
                f"{repo.describe_object(g.sha or '', kind)}, not a commit; pin the commit id"
            )


def _promotion_order(channels: Mapping[str, Channel]) -> list[str]:
    """Channels ordered so that each comes after its source (dev, alpha, beta, stable)."""
    order: list[str] = []
    for name in sorted(channels):
        chain: list[str] = []
        current: str | None = name
        while current is not None and current not in order:
            if current in chain:
                raise ConfigError(
                    f"channels form a cycle through their sources: {' -> '.join(chain)}"
                )
            chain.append(current)
            current = channels[current].source
        order.extend(reversed(chain))
    return order


# --- edits ---------------------------------------------------------------------------------------


def pin_groups(text: str, channel: Channel, pins: Mapping[str, Mapping[str, str]]) -> str:
    """The channel file with the named groups set to new values (`sha`, `promoted_at`, ...).

    A channel without groups gets a `default` group, so that every promotion is a pin in history.
    """
    doc = yamledit.Document(text, channel.path)
    if not channel.groups:
        (values,) = pins.values()
        block = "groups:\n  - name: default\n" + "".join(
            f"    {k}: {yamledit.format_scalar(v)}\n" for k, v in values.items()
        )
        data = dict(doc.data or {})
        data["groups"] = [{"name": DEFAULT_GROUP, **values}]
        doc.append_block(block, data)
        return doc.text
    index = {g.name: i for i, g in enumerate(channel.groups)}
    for name, values in pins.items():
        doc.set(["groups", index[name]], values)
    return doc.text


def set_freeze(text: str, channel: Channel, *, frozen: bool, reason: str) -> str:
    doc = yamledit.Document(text, channel.path)
    doc.set([], {"frozen": frozen, "freeze_reason": reason})
    return doc.text
