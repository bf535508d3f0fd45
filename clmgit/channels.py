"""Channel files (`channels/<name>.yaml` on the control branch): their model, validation and edits.

A channel is a git branch plus, optionally, groups of clusters pinned to commits. A cluster
belongs to the first group whose selector matches it; a channel with no groups follows its branch.

A pin is always a map {source: sha}, one entry per config source (`sources:` in `clmgit.yaml`;
without it the repository is its one source, `main`). How a pin is spelled — in the channel
file (a bare `sha:` for one source, a mapping for several), in a commit subject, as a config
version — is decided here, by the pin codec at the end of this module, and nowhere else.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from clmgit import yamledit
from clmgit.durations import parse_duration
from clmgit.errors import ConfigError
from clmgit.healthstate import HealthGate, parse_gate
from clmgit.model import SHA_RE, Cluster, config_version, is_selector_key
from clmgit.windows import Window, parse_line, parse_window

if TYPE_CHECKING:
    from clmgit.adapters.git import GitRepo

#: A pin: {source: sha} in the order of the sources.
Pins = Mapping[str, str]
#: The name of the one source of a repository that declares none (as `clmgit.layout.MAIN`).
MAIN_SOURCE = "main"

CHANNELS_DIR = "channels"
DEFAULT_GROUP = "default"


@dataclass(frozen=True)
class Group:
    name: str
    selector: Mapping[str, str] = field(default_factory=dict)
    #: {source: sha} as the file has it ({}: no pin yet); `Channel.pins_of` tells whether it
    #: names every source.
    pins: Pins = field(default_factory=dict)
    promoted_at: str = ""
    promoted_from: str = ""
    #: When its clusters may be changed, unless their record names a `maintenance_window`.
    maintenance_window: Window | None = None

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
    #: The promoted commit (with "all": also every commit it brings) signed by an allowed key.
    signed_source: str | None = None


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
    #: The config sources the pins name, in order.
    sources: tuple[str, ...] = (MAIN_SOURCE,)
    #: When promotions into the channel may land (clmgit/windows.py); None: at any time.
    windows: Window | None = None

    @property
    def pinned(self) -> bool:
        return bool(self.groups)

    @property
    def health_gate(self) -> HealthGate | None:
        return self.gates.healthy_in_source

    def pins_of(self, group: Group) -> Pins | None:
        """The group's pin when it names every source, else None."""
        if not group.pins or set(group.pins) != set(self.sources):
            return None
        return {n: group.pins[n] for n in self.sources}

    def group(self, name: str) -> Group:
        for g in self.groups:
            if g.name == name:
                return g
        known = ", ".join(g.name for g in self.groups) or "none"
        raise ConfigError(f"channel {self.name!r} has no group {name!r} (groups: {known})")

    def group_for(self, cluster: Cluster) -> Group | None:
        """The first group whose selector matches. Clusters alike in the fields the selectors
        name get the same answer, worked out once (a fleet has thousands of clusters and a
        handful of groups)."""
        alike = tuple(map(cluster.field_value, self._selector_keys))
        try:
            return self._group_by_fields[alike]
        except KeyError:
            group = next((g for g in self.groups if g.matches(cluster)), None)
            return self._group_by_fields.setdefault(alike, group)

    @cached_property
    def _selector_keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(k for g in self.groups for k in g.selector))

    @cached_property
    def _group_by_fields(self) -> dict[tuple[str | None, ...], Group | None]:
        return {}

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


def parse_channel(name: str, text: bytes | str, path: str,
                  sources: Sequence[str] = (MAIN_SOURCE,)) -> Channel:
    """A channel file; `sources` are the names of the config sources its pins name."""
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
    groups = tuple(_parse_group(g, f"{path}, group #{i + 1}", sources)
                   for i, g in enumerate(groups_raw))
    seen: set[str] = set()
    for g in groups:
        if g.name in seen:
            raise ConfigError(f"{path}: group {g.name!r} is defined twice")
        seen.add(g.name)
    gates_raw = raw.get("gates") or {}
    if not isinstance(gates_raw, Mapping):
        raise ConfigError(f"{path}: gates must be a mapping")
    unknown = set(gates_raw) - {"applied_in_source", "soak", "groups_before", "healthy_in_source",
                                "signed_source"}
    if unknown:
        raise ConfigError(f"{path}: unknown gate {sorted(unknown)[0]!r}")
    soak = gates_raw.get("soak")
    groups_before = gates_raw.get("groups_before")
    if groups_before not in (None, "applied", "healthy"):
        raise ConfigError(f"{path}: gates.groups_before must be 'applied' or 'healthy', not "
                          f"{groups_before!r}")
    signed = gates_raw.get("signed_source", False)
    if signed not in (True, False, None, "all"):
        raise ConfigError(f"{path}: gates.signed_source must be true, false or 'all', not "
                          f"{signed!r}")
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
            signed_source="all" if signed == "all" else ("head" if signed else None),
        ),
        groups=groups,
        sources=tuple(sources),
        windows=parse_window(raw.get("windows"), f"{path}: windows"),
    )


def _parse_group(raw: Any, where: str, sources: Sequence[str]) -> Group:
    if not isinstance(raw, Mapping) or not raw.get("name"):
        raise ConfigError(f"{where}: every group needs a name")
    where = f"{where.rsplit(',', 1)[0]}, group {raw['name']!r}"
    selector = raw.get("selector") or {}
    if not isinstance(selector, Mapping):
        raise ConfigError(f"{where}: selector must be a mapping of field to glob")
    for key in selector:
        if not is_selector_key(str(key)):
            raise ConfigError(f"{where}: unknown selector key {key!r}")
    return Group(
        name=str(raw["name"]),
        selector={str(k): _str(v) for k, v in selector.items()},
        pins=decode_pin(raw.get("sha"), sources, where),
        promoted_at=_str(raw.get("promoted_at")),
        promoted_from=_str(raw.get("promoted_from")),
        maintenance_window=parse_window(raw.get("maintenance_window"),
                                        f"{where}: maintenance_window"),
    )


#: The registry config item naming a cluster's maintenance window (clmgit/windows.py).
MAINTENANCE_WINDOW = "maintenance_window"


def maintenance_window(channels: Mapping[str, Channel], cluster: Cluster) -> Window | None:
    """When reconcile may change the cluster: its config item `maintenance_window` (one line,
    the zone last), else its group's; None: at any time."""
    text = cluster.config_items.get(MAINTENANCE_WINDOW, "")
    if text.strip():
        name = cluster.alias or cluster.id
        return parse_line(text, f"cluster {name}: config item {MAINTENANCE_WINDOW}")
    channel = channels.get(cluster.channel)
    group = channel.group_for(cluster) if channel is not None else None
    return group.maintenance_window if group is not None else None


def channel_path(name: str) -> str:
    return f"{CHANNELS_DIR}/{name}.yaml"


def load_channels(repo: GitRepo, ref: str, *, control_branch: str,
                  sources: Sequence[str] = (MAIN_SOURCE,)) -> dict[str, Channel]:
    """Every channel file at `ref` of the control branch, validated together, in promotion order;
    `sources` are the names of the config sources the pins name."""
    channels: dict[str, Channel] = {}
    for path in repo.list_files(ref, CHANNELS_DIR):
        if not path.endswith((".yaml", ".yml")) or path.count("/") != 1:
            continue
        name = path.rsplit("/", 1)[1].rsplit(".", 1)[0]
        data = repo.read_file(ref, path)
        assert data is not None
        channels[name] = parse_channel(name, data, path, sources)
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
    pinned = [(ch, g, sha) for ch in channels for g in ch.groups for sha in g.pins.values()]
    kinds = repo.object_types([sha for _, _, sha in pinned])
    for ch, g, sha in pinned:
        kind = kinds.get(sha)
        if kind not in (None, "commit"):
            raise ConfigError(
                f"{ch.path}, group {g.name!r}: sha {sha} is "
                f"{repo.describe_object(sha, kind)}, not a commit; pin the commit id"
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


def pin_groups(text: str, channel: Channel,
               pins: Mapping[str, Mapping[str, yamledit.Value]]) -> str:
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


# --- the pin codec: every spelling of a pin ------------------------------------------------------


def decode_pin(raw: Any, sources: Sequence[str], where: str) -> dict[str, str]:
    """A group's `sha:` as {source: sha}: a bare SHA is the first (with one source: the only)
    source's, a mapping names each source; {} when there is none."""
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        pins = {str(k): str(v) for k, v in raw.items()}
        for source, pin in pins.items():
            if not SHA_RE.match(pin):
                raise ConfigError(f"{where}: sha of source {source!r} must be a full 40-hex "
                                  f"commit SHA, not {pin!r}")
        return pins
    sha = str(raw)
    if not SHA_RE.match(sha):
        raise ConfigError(f"{where}: sha must be a full 40-hex commit SHA, not {sha!r}")
    return {sources[0]: sha}


def encode_pin(pins: Pins) -> str | dict[str, str]:
    """The `sha:` value written for a pin: a bare SHA for one source, else a mapping (written as
    one flow mapping, `sha: {main: ..., addons: ...}`)."""
    if len(pins) == 1:
        return next(iter(pins.values()))
    return dict(pins)


def pin_version(pins: Pins) -> str:
    """The config version of a pin (CLM's): the SHA for one source, else `main=<sha>;...`."""
    return config_version(list(pins.items()))


def pin_range(old: Pins | None, new: Pins) -> str:
    """A move of a pin as a commit subject says it: `a..b` for one source, else
    `main a..b, addons c..d`."""
    moves = {n: f"{(old or {}).get(n, 'none')[:7]}..{sha[:7]}" for n, sha in new.items()}
    if len(moves) == 1:
        return next(iter(moves.values()))
    return ", ".join(f"{n} {m}" for n, m in moves.items())


def named(sources: Sequence[str], source: str, sentence: str) -> str:
    """A sentence about one source's commit: as it is with one source, else naming it."""
    return sentence if len(sources) == 1 else f"source {source!r}: {sentence}"
