"""Promotion gates (docs/reference/channel-files.md): one list, each gate judged over the config
version — every source's commit — for one source or many alike.

A gate is a function of a `Promotion` (what is promoted, from where, into which groups) that
returns `GateResult`s: passed, or the sentence that says why it refuses. A refusal about one
source's commit names that source when there are several (`Versions.named`). The planner
judges the list `clmgit/promotion/promote.py:GATES`; a new gate is a function added there (and
its key in `clmgit/channels.py:Gates`). `judge` decides which refusals an override (--force,
--ignore-freeze, --from-any) lifts; every lifted refusal is recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from clmgit.channels import Channel, Pins
from clmgit.durations import format_duration
from clmgit.healthstate import HEALTHY, gate_for
from clmgit.healthstate import judge as judge_health
from clmgit.model import DECOMMISSION_REQUESTED, DECOMMISSIONED, REQUESTED, Cluster, short_version
from clmgit.promotion.content import contains
from clmgit.timestamps import parse_timestamp
from clmgit.versions import Versions
from clmgit.windows import format_instant
from clmgit.workspace import Workspace

#: Clusters that are not (or no longer) running do not hold back a promotion.
INACTIVE = frozenset({REQUESTED, DECOMMISSION_REQUESTED, DECOMMISSIONED})


FREEZE = "freeze"
APPLIED = "applied_in_source"
SOAK = "soak"
FORWARD = "forward_only"
BRANCH_CONTENT = "branch_content"
SOURCE = "source"
GROUPS_BEFORE = "groups_before"
HEALTHY_IN_SOURCE = "healthy_in_source"
WINDOW = "window"
SIGNED = "signed_source"

#: `promoted_from` of a group pinned by a hotfix (`sync-branches` merges it upstream).
HOTFIX = "hotfix"

#: The flag that lifts each gate's refusal; every other gate is lifted by --force.
_LIFTED_BY = {FREEZE: "--ignore-freeze", SOURCE: "--from-any"}


@dataclass(frozen=True)
class GateResult:
    gate: str  # one of the names above
    refusal: str | None  # None: passed
    #: Lines the promotion commit records about this gate (the health verdicts).
    record: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    refusals: tuple[str, ...]
    overrides: tuple[str, ...]  # "--force: <the refusal it lifted>"


@dataclass(frozen=True)
class Promotion:
    """What the gates judge: `new` promoted from `source` into `target`, whose `olds` (group →
    its pin before, None: none) change; `groups` are the names of those groups when the target
    has groups, else ()."""

    ws: Workspace
    source: Channel
    target: Channel
    new: Pins
    olds: Mapping[str, Pins | None]
    groups: tuple[str, ...]
    now: datetime

    @property
    def versions(self) -> Versions:
        return self.ws.versions

    @property
    def shown(self) -> str:
        """The new version as refusals show it: a short SHA, or each source's."""
        return short_version(self.versions.version(self.new))

    @cached_property
    def source_clusters(self) -> list[Cluster]:
        return source_clusters(self.ws, self.source)


def judge(results: Sequence[GateResult], *, force: bool, ignore_freeze: bool,
          from_any: bool = False) -> Verdict:
    """--ignore-freeze lifts the freeze only, --from-any the pipeline's order only; --force
    lifts every other gate."""
    given = {"--force": force, "--ignore-freeze": ignore_freeze, "--from-any": from_any}
    refusals: list[str] = []
    overrides: list[str] = []
    for r in results:
        if r.refusal is None:
            continue
        flag = _LIFTED_BY.get(r.gate, "--force")
        if given[flag]:
            overrides.append(f"{flag}: {r.refusal}")
        else:
            refusals.append(r.refusal)
    return Verdict(tuple(dict.fromkeys(refusals)), tuple(dict.fromkeys(overrides)))


# --- the gates ---------------------------------------------------------------------------------


def check_freeze(p: Promotion) -> list[GateResult]:
    refusal = None
    if p.target.frozen:
        why = f": {p.target.freeze_reason}" if p.target.freeze_reason else ""
        refusal = f"channel {p.target.name!r} is frozen{why} (--ignore-freeze overrides)"
    return [GateResult(FREEZE, refusal)]


def check_source(p: Promotion) -> list[GateResult]:
    """Gates are judged in the source channel: promoting past the pipeline's order would judge
    them where the change never ran (`promote dev stable` while stable's source is beta)."""
    target, source = p.target, p.source
    if target.source is None or target.source == source.name:
        return [GateResult(SOURCE, None)]
    return [GateResult(SOURCE, (
        f"{target.name!r} is promoted from {target.source!r}, not {source.name!r}: its gates "
        f"would be judged where the change has not run (--from-any overrides)"
    ))]


def check_forward(p: Promotion) -> list[GateResult]:
    """Every current pin of a changed group must be contained in the new one, per source."""
    results = []
    for name, sha in p.new.items():
        repo = p.versions.repo(name)
        behind = [(g, old[name]) for g, old in p.olds.items()
                  if old and not contains(repo, old[name], sha)]
        refusal = None
        if behind:
            where = "" if p.target.pinned else (
                f", the head of branch {p.versions.branch_name(name, p.target)!r}")
            at = ", ".join(f"{group} at {old[:7]}{where}" for group, old in behind)
            refusal = p.versions.named(name, (
                f"{sha[:7]} does not contain the pins of {p.target.name!r} ({at}); promotion "
                f"only moves forward ({_next_step(p, [g for g, _ in behind])})"))
        results.append(GateResult(FORWARD, refusal))
    return results


def _next_step(p: Promotion, groups: Sequence[str]) -> str:
    """What to do about a refusal of forward-only: a hotfix pin comes back through the pipeline
    (promotion/sync.py), anything else is left by rollback."""
    if p.source.name != p.target.name and any(
            g.promoted_from == HOTFIX for g in p.target.groups if g.name in groups):
        return (f"the hotfix pinned in {p.target.name!r} is not in {p.source.name!r} yet: "
                "`clmgit sync-branches` merges it into the first channel's branch, from where "
                "it is promoted like any change; or --force drops it")
    return "use rollback, or --force"


def check_applied(p: Promotion) -> list[GateResult]:
    """`applied_in_source`: every running source cluster applied the new commit, per source."""
    if not p.target.gates.applied_in_source:
        return []
    clusters = p.source_clusters
    results = []
    for name, sha in p.new.items():
        missing = [c for c in clusters if not p.versions.has_applied(c, {name: sha})]
        refusal = None
        if not clusters:
            refusal = (f"no running cluster of {p.source.name!r} can have applied {sha[:7]}: "
                       "the channel has none, so this gate cannot pass (--force overrides)")
        elif missing:
            names = ", ".join(c.alias or c.id for c in missing[:10])
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            refusal = (f"{len(missing)} of {len(clusters)} clusters of {p.source.name!r} have "
                       f"not applied {sha[:7]}: {names}{more}; promote again once reconcile "
                       "has applied it there (--force overrides)")
        results.append(GateResult(APPLIED, refusal and p.versions.named(name, refusal)))
    return results


def groups_before(p: Promotion) -> tuple[list[str], list[Cluster]]:
    """For `groups_before`: the groups before the promoted ones promoted in the same step, and
    the running clusters of the groups before them (the canary first in the channel file)."""
    target = p.target
    last = max(i for i, g in enumerate(target.groups) if g.name in p.groups)
    earlier = [g for g in target.groups[:last] if g.name not in p.groups]
    together = [g.name for g in target.groups[:last] if g.name in p.groups]
    clusters = [c for c in source_clusters(p.ws, target)
                if (group := target.group_for(c)) is not None and group in earlier]
    return together, clusters


def check_groups_before(p: Promotion) -> list[GateResult]:
    """`groups_before: applied`: every group promoted must have all the groups before it in
    the channel file running the new version already (`healthy`, when no group before is
    promoted in the same step: clmgit/promotion/health.py:check_groups_healthy)."""
    if p.target.gates.groups_before not in ("applied", "healthy") or not p.groups:
        return [GateResult(GROUPS_BEFORE, None)]
    together, clusters = groups_before(p)
    if p.target.gates.groups_before == "healthy" and not together:
        return []
    waiting = [c for c in clusters if not p.versions.has_applied(c, p.new)]
    # Each refusal names the next step, which is not --force.
    if together:
        waiting_for = (f"group(s) {', '.join(together)} promoted in the same step; "
                       f"promote --group {together[0]} first, the rest once it has applied")
    elif waiting:
        names = ", ".join(c.alias or c.id for c in waiting[:10])
        waiting_for = (f"{len(waiting)} cluster(s) of the groups before it have not: {names}; "
                       "promote again once reconcile has applied it there")
    else:
        return [GateResult(GROUPS_BEFORE, None)]
    return [GateResult(GROUPS_BEFORE, (
        f"{p.target.name!r} promotes a group only after the groups before it applied "
        f"{p.shown}; {waiting_for} (--force overrides)"))]


def check_soak(p: Promotion) -> list[GateResult]:
    soak = p.target.gates.soak
    if not soak:
        return []
    start = soak_start(p.ws, p.source, p.new, p.source_clusters)
    if p.target.gates.healthy_in_source is not None:
        # With the health gate the soak clock starts when the source became healthy.
        start = healthy_start(p.ws, p.source_clusters, p.now) or p.now
    left = soak - (p.now - start)
    refusal = None
    if left.total_seconds() > 0:
        refusal = (f"{p.shown} has soaked in {p.source.name!r} for "
                   f"{format_duration(p.now - start)} of the {format_duration(soak)} that "
                   f"{p.target.name!r} requires; {format_duration(left)} left (--force overrides)")
    return [GateResult(SOAK, refusal)]


# --- what the gates read -----------------------------------------------------------------------


def check_window(p: Promotion) -> list[GateResult]:
    return [window_gate(p.target, p.now)]


def window_gate(target: Channel, now: datetime) -> GateResult:
    """`windows:` of the target: a promotion or rollback lands only while one is open (deny over
    allow)."""
    window = target.windows
    if window is None or window.is_open(now):
        return GateResult(WINDOW, None)
    opening = window.next_opening(now)
    when = (f"the next opens at {format_instant(opening, window.zone)}" if opening
            else "no window opens again")
    return GateResult(WINDOW, (
        f"{WINDOW_CLOSED} {target.name!r} ({window.describe()}); {when} (--force overrides)"))


#: How a window's refusal begins; an override of it is recorded as `Clmgit-Override: window`.
WINDOW_CLOSED = "outside the promotion windows of"


def window_overrides(overrides: Sequence[str]) -> list[str]:
    """The overrides (`--force: <refusal>`) that lifted a closed promotion window."""
    return [o for o in overrides if o.partition(": ")[2].startswith(WINDOW_CLOSED)]


def override_trailers(overrides: Sequence[str]) -> list[str]:
    """`Clmgit-Override:` trailers: the flag of each override, and `window` for a window's."""
    names = [o.split(":", 1)[0].lstrip("-") for o in overrides]
    names += [WINDOW for _ in window_overrides(overrides)]
    return [f"Clmgit-Override: {name}" for name in dict.fromkeys(names)]


def check_signed(p: Promotion) -> list[GateResult]:
    """`signed_source`: each source's promoted commit (`all`: also each commit it brings past
    the target's current pins) is signed by a key of the allowed signers (clmgit/signing.py),
    verified in that source's repository."""
    mode = p.target.gates.signed_source
    if mode is None:
        return [GateResult(SIGNED, None)]
    from clmgit import signing

    ws, target = p.ws, p.target
    where = f"clmgit.yaml on branch {ws.control_branch!r}"
    settings = signing.settings_at(ws.repo, ws.control_sha, where)
    results = []
    for name, sha in p.new.items():
        commits = p.versions.repo(name)
        verifier = signing.verifier_at(ws.repo, ws.control_sha, settings, verify_in=commits,
                                       why=f"gates.signed_source of {target.path}")
        shas = [sha]
        if mode == "all":
            olds = [old[name] for old in p.olds.values() if old and name in old]
            bases = [o for o in olds if commits.is_ancestor(o, sha)]
            listed = commits.run("rev-list", sha, *(f"^{b}" for b in bases), "--").split()
            shas = list(dict.fromkeys([sha, *listed]))
        unsigned = verifier.unsigned(shas)
        refusal = None
        if unsigned:
            which = "; ".join(s.refusal() for s in unsigned[:5])
            more = f" and {len(unsigned) - 5} more" if len(unsigned) > 5 else ""
            refusal = p.versions.named(name, (
                f"{target.name!r} takes only commits signed by a key in "
                f"{settings.allowed_signers}: {which}{more} (--force overrides)"))
        results.append(GateResult(SIGNED, refusal))
    return results


def source_clusters(ws: Workspace, source: Channel) -> list[Cluster]:
    return [
        c for c in ws.clusters if c.channel == source.name and c.lifecycle_status not in INACTIVE
    ]


def soak_start(ws: Workspace, source: Channel, pins: Pins,
               clusters: Sequence[Cluster]) -> datetime:
    """When `pins` landed in the source channel: the latest time a source cluster applied it,
    as the registry records; without records, when it was pinned there; else the newest of
    its commit times."""
    times = [parse_timestamp(c.status.applied_at) for c in clusters]
    known = [t for t in times if t is not None]
    if known and len(known) == len(times):
        return max(known)
    pinned = [parse_timestamp(g.promoted_at) for g in source.groups
              if source.pins_of(g) == dict(pins)]
    candidates = known + [t for t in pinned if t is not None]
    if candidates:
        return max(candidates)
    return ws.versions.commit_time(pins)


def healthy_start(ws: Workspace, clusters: Sequence[Cluster], now: datetime) -> datetime | None:
    """With the health gate, the soak clock starts when the source became healthy: the
    latest `healthy_since` of its clusters (None unless every one has a healthy verdict)."""
    starts = []
    for cluster in clusters:
        deadline = gate_for(ws.channels.values(), cluster.channel).progress_deadline
        judged = judge_health(cluster.status, deadline=deadline, now=now)
        start = parse_timestamp(judged.since) if judged.state == HEALTHY else None
        if start is None:
            return None
        starts.append(start)
    return max(starts) if starts else None
