"""Variants of the clusters a check renders, made so that every template of the tree renders
content for at least one of them (where a file renders only comments, "identical" proves only
the `if` around it), and every config item compared with constants takes each of them.

The config items the templates compare (`clmgit.convert.compared`) are the candidate settings.
First the reaching variants: each candidate is tried on the Go original alone, on the unreached
files that read its item (a few milliseconds each); a lazy greedy set cover picks the candidates
that reach the most, pairs of one file's own settings are tried where no single one does
(`eq a "yes"` inside `ne b "off"`). Then the value variants: each item compared with constants
set to each constant that the start and the reaching variants lack. Each group of picks is
packed first fit into as few variants as agree on every item's value, and each packed variant
is tried as a whole: a pick with which the original fails on its own is left out (and
reported), one that fails only in company, or whose files the variant no longer reaches, moves
on to another variant. Every variant has the node pools of
`clmgit.convert.clmdata.VARIANT_POOLS` (taints, labels, zones, spot, arm64, t2, Karpenter
requirements, a master), so that the pools' own branches are rendered too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations

from clmgit.convert.compared import Item, compared_items, compared_values, field_items
from clmgit.convert.nodes import Parsed
from clmgit.model import Cluster, NodePool

Setting = tuple[Item, str]
PAIRS_PER_FILE = 60  # pairs tried for a file no single setting reaches: a bound on the search


@dataclass(frozen=True)
class Reached:
    """What a cluster's Go rendering of some files gave: those with content, those failing."""

    content: set[str]
    failed: set[str]


#: Which of the files a cluster renders content for, and which fail (`Checker.reach`).
Reach = Callable[[Cluster, Collection[str]], Reached]


@dataclass(frozen=True)
class Variant:
    """A cluster made to reach templates, and what it sets beyond the cluster it was made from
    (`Cluster.ConfigItems.x`, `NodePool.ConfigItems.y` on every pool): for the report."""

    cluster: Cluster
    settings: dict[str, str]


@dataclass
class _Pick:
    settings: tuple[Setting, ...]
    reaches: set[str]


@dataclass
class _Bin:
    items: dict[Item, str] = field(default_factory=dict)
    picks: list[_Pick] = field(default_factory=list)

    def agrees(self, pick: _Pick) -> bool:
        return all(self.items.get(item, value) == value for item, value in pick.settings)

    def add(self, pick: _Pick) -> None:
        self.items.update(pick.settings)
        self.picks.append(pick)


@dataclass
class _Search:
    """The cover of one tree from one start: probes of settings on the Go original."""

    start: Cluster
    trees: Mapping[str, Parsed]  # every template
    reach: Reach
    _broken: set[str] | None = None  # what fails for the start already
    _reads: dict[str, set[Item]] = field(default_factory=dict)  # the items each template reads

    def probe(self, items: Mapping[Item, str], wanted: Collection[str]) -> Reached:
        return self.reach(variant(self.start, items, 0), wanted)

    def whole(self, items: Mapping[Item, str]) -> tuple[set[str], set[str]]:
        """Every template tried with the settings: those with content, and those that fail
        but render for the start (a value no registry would hold, or two settings that
        exclude each other)."""
        reached = self.probe(items, self.trees)
        return reached.content - reached.failed, self.new_failures(reached.failed)

    def new_failures(self, failed: set[str]) -> set[str]:
        if failed and self._broken is None:
            self._broken = self.probe({}, self.trees).failed
        return failed - (self._broken or set())

    def culprits(self, picks: Sequence[_Pick], failed: set[str]) -> list[_Pick]:
        """The picks that make some of `failed` fail on their own: first those whose items
        the failing templates read, tried on those templates only; all of them if none."""
        suspects = [p for p in picks if any(item in self.reads(path) for path in failed
                                            for item, _value in p.settings)]
        for group in (suspects, [p for p in picks if p not in suspects]):
            found = [p for p in group
                     if self.new_failures(self.probe(dict(p.settings), failed).failed)]
            if found:
                return found
        return []

    def reads(self, path: str) -> set[Item]:
        if path not in self._reads:
            tree = [self.trees[path]]
            self._reads[path] = {*compared_items(tree), *field_items(tree)}
        return self._reads[path]

    def gain(self, items: Mapping[Item, str], wanted: set[str]) -> set[str]:
        reached = self.probe(items, wanted)
        return reached.content - reached.failed


@dataclass(frozen=True)
class Cover:
    """The variants made, and the settings left out because CLM's original fails with them."""

    variants: list[Variant]
    left_out: list[str]  # `Cluster.ConfigItems.x=v`


def covering_variants(base: Cluster, pools: Sequence[NodePool], unreached: Collection[str],
                      trees: Mapping[str, Parsed], reach: Reach, *,
                      items: Mapping[str, str]) -> Cover:
    """Clusters made from `base` with `pools`: first those that reach as many of `unreached`
    as setting the compared config items can (at least one: the pools are worth rendering on
    their own); then those that set each item compared with constants to each constant that
    neither `base` nor those have, in as few variants as agree. None breaks a template.

    `trees`: every template's syntax tree. `items`: `base`'s config items with its defaults;
    an item a template reads as a field and no one sets gets a made-up value, as a registry
    holds it for a cluster that turns on what reads it."""
    # Cluster items only: a pool's own (labels, taints) are structured, and the pools have them.
    placeholders = {item: f"sample-{item.key}" for item in field_items(trees.values())
                    if item.scope == "Cluster" and item.key not in items}
    start = variant(replace(base, node_pools=tuple(pools)), placeholders, 0)
    search = _Search(start, trees, reach)
    reaching, dropped = _pack(search, _pick(search, set(unreached)))
    reaching = reaching or [_Bin()]
    exercised = {*_settings_of(start, items), *(s for b in reaching for s in b.items.items()),
                 *(s for p in dropped for s in p.settings)}
    rest = [_Pick((s,), set()) for s in _settings(compared_values(trees.values()))
            if s not in exercised]
    values, dropped_values = _pack(search, rest)
    made = [Variant(variant(start, b.items, n), {_name(i): v for i, v in {**placeholders,
                                                                         **b.items}.items()})
            for n, b in enumerate(reaching + values, 1)]
    return Cover(made, [f"{_name(i)}={v}" for p in dropped + dropped_values
                        for i, v in p.settings])


def _name(item: Item) -> str:
    return f"{item.scope}.ConfigItems.{item.key}"


def _settings_of(start: Cluster, items: Mapping[str, str]) -> set[Setting]:
    """The settings the start has already: its cluster's items with the defaults, and its
    pools' (which inherit the cluster's)."""
    own = {**items, **start.config_items}
    found = {(Item("Cluster", k), v) for k, v in own.items()}
    found |= {(Item("NodePool", k), v) for k, v in own.items()}
    return found | {(Item("NodePool", k), v) for p in start.node_pools
                    for k, v in p.config_items.items()}


def variant(base: Cluster, items: Mapping[Item, str], number: int) -> Cluster:
    """`base` with the settings: cluster items on the cluster, node pool items on every pool;
    named `<local id>-v<number>` (0: a probe, which keeps the name)."""
    cluster_items = {i.key: v for i, v in items.items() if i.scope == "Cluster"}
    pool_items = {i.key: v for i, v in items.items() if i.scope == "NodePool"}
    made = replace(base, config_items={**base.config_items, **cluster_items},
                   node_pools=tuple(replace(p, config_items={**p.config_items, **pool_items})
                                    for p in base.node_pools))
    if not number:
        return made
    name = f"{base.local_id}-v{number}"
    return replace(made, id=base.id.rsplit(":", 1)[0] + ":" + name if ":" in base.id else name,
                   alias=name, local_id=name)


def _pick(search: _Search, remaining: set[str]) -> list[_Pick]:
    """The greedy cover: single settings, the one that reaches most first; then pairs of a
    file's own settings for what is left. A setting is tried on the files that read its item
    only, and lazily: the settings are taken in the order of how many of those files remain,
    and tried until none can reach more than the best tried (what one reaches only shrinks as
    files are covered)."""
    per_file = {path: _settings(compared_items([search.trees[path]]))
                for path in sorted(remaining) if path in search.trees}
    readers: dict[Setting, set[str]] = {}
    for path, settings in per_file.items():
        for setting in settings:
            readers.setdefault(setting, set()).add(path)
    tried: dict[Setting, set[str]] = {}

    def bound(s: Setting) -> int:
        return len((tried[s] if s in tried else readers[s]) & remaining)

    picks: list[_Pick] = []
    while remaining and readers:
        best: Setting | None = None
        # Ties: "false" last, which reads as "off" even where any value turns content on.
        for s in sorted(readers, key=lambda s: (-bound(s), s[1] == "false", s)):
            if best is not None and bound(s) <= bound(best):
                break
            if s not in tried:
                tried[s] = search.gain(dict([s]), readers[s] & remaining)
            if best is None or bound(s) > bound(best):
                best = s
        if best is None or not bound(best):
            break
        del readers[best]
        picks.append(_Pick((best,), tried[best] & remaining))
        remaining -= tried[best]
    for path in sorted(remaining):
        if path in remaining:
            pick = _pair_for(search, path, per_file.get(path, []), remaining)
            if pick is not None:
                picks.append(pick)
                remaining -= pick.reaches
    return picks


def _pair_for(search: _Search, path: str, settings: Sequence[Setting],
              remaining: set[str]) -> _Pick | None:
    pairs = [(a, b) for a, b in combinations(settings, 2) if a[0] != b[0]]
    for pair in pairs[:PAIRS_PER_FILE]:
        if path in search.gain(dict(pair), {path}):
            return _Pick(pair, search.gain(dict(pair), remaining))
    return None


def _settings(items: Mapping[Item, Iterable[str]]) -> list[Setting]:
    return [(item, value) for item, values in items.items() for value in values]


def _pack(search: _Search, picks: list[_Pick]) -> tuple[list[_Bin], list[_Pick]]:
    """The picks in as few variants as agree on each item (first fit), each variant tried as a
    whole; and the picks dropped. A pick that makes a template fail on its own is dropped (a
    file it was to reach stays uncovered, and the report says so); one that fails only in the
    others' company, or whose files the variant no longer reaches, moves on to the next
    variant, or to one of its own."""
    bins: list[_Bin] = []
    dropped: list[_Pick] = []
    queue = list(picks)
    while queue:
        pending, queue = queue, []
        fresh: list[_Bin] = []
        for pick in pending:
            home = next((b for b in fresh if b.agrees(pick)), None)
            if home is None:
                home = _Bin()
                fresh.append(home)
            home.add(pick)
        for b in fresh:
            served, failed = search.whole(b.items)
            if failed:
                culprits = search.culprits(b.picks, failed)
                dropped += culprits
                rest = [p for p in b.picks if p not in culprits]
                if not culprits and rest:  # in company only: the first alone, as it was tried
                    bins.append(_Bin(dict(rest[0].settings), rest[:1]))
                    rest = rest[1:]
                queue += rest
                continue
            # The first pick stays in any case, so that every round settles one.
            kept = [p for p in b.picks if p.reaches <= served] or b.picks[:1]
            queue += [p for p in b.picks if p not in kept]
            bins.append(_Bin(dict(s for p in kept for s in p.settings), kept))
    return bins, dropped
