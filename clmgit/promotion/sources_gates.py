"""The promotion gates judged for several config sources (promotion/sources.py): forward-only
and `applied_in_source` per source, each refusal naming its source; `groups_before` with every
source's pin; the soak of the pins together. Freeze and the pipeline's order are judged once,
by gates.py itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from clmgit.channels import Channel, group_pins
from clmgit.durations import format_duration
from clmgit.errors import ConfigError
from clmgit.layout import Sources
from clmgit.model import (
    SHA_RE,
    Cluster,
    config_version,
    parse_version,
    short_version,
    split_config_version,
)
from clmgit.promotion import gates
from clmgit.timestamps import parse_timestamp
from clmgit.workspace import Workspace


def per_source_gates(ws: Workspace, src: Channel, dst: Channel, new: Mapping[str, str],
                      olds: Mapping[str, Mapping[str, str] | None], changed: Sequence[str],
                      now: datetime) -> list[gates.GateResult]:
    """Forward only, applied in source and soak, each judged per source; each refusal names
    its source."""
    repos, sources = ws.source_repos, ws.sources
    clusters = gates.source_clusters(ws, src)
    results = []
    for s in sources.sources:
        repo = repos.repo(s.name)
        behind = [(g, o[s.name]) for g in changed if (o := olds[g])]
        forward = gates.check_forward(repo, dst, behind, new[s.name])
        results.append(_named(forward, s.name))
        if dst.gates.applied_in_source:
            results.append(_named(_applied(ws, s.name, src, new[s.name], clusters), s.name))
    if dst.gates.soak:
        results.append(_soak(ws, src, dst, new, clusters, now))
    results.append(_groups_before(ws, dst, changed, new))
    return results


def _groups_before(ws: Workspace, dst: Channel, changed: Sequence[str],
                   new: Mapping[str, str]) -> gates.GateResult:
    """`groups_before: applied` (gates.check_groups_before) with the pins of every source: the
    groups before those promoted must run all of them."""
    if dst.gates.groups_before != "applied" or not dst.groups:
        return gates.GateResult(gates.GROUPS_BEFORE, None)
    last = max(i for i, g in enumerate(dst.groups) if g.name in changed)
    earlier = [g.name for g in dst.groups[:last] if g.name not in changed]
    together = [g.name for g in dst.groups[:last] if g.name in changed]
    waiting = [c for c in gates.source_clusters(ws, dst)
               if (g := dst.group_for(c)) is not None and g.name in earlier
               and not all(_has_applied(ws, n, sha, c) for n, sha in new.items())]
    return gates.groups_before_result(dst, together, waiting,
                                      short_version(config_version(list(new.items()))))


def _named(result: gates.GateResult, source: str) -> gates.GateResult:
    if result.refusal is None:
        return result
    return gates.GateResult(result.gate, f"source {source!r}: {result.refusal}")


def applied_shas(cluster: Cluster, sources: Sources) -> dict[str, str]:
    """{source: sha} of the version a cluster applied ({} when it names other sources)."""
    try:
        return split_config_version(parse_version(cluster.status.current_version)[0],
                                    sources.names)
    except ConfigError:
        return {}


def _applied(ws: Workspace, name: str, src: Channel, sha: str,
             clusters: Sequence[Cluster]) -> gates.GateResult:
    if not clusters:
        return gates.check_applied(ws, src, sha, clusters)
    missing = [c for c in clusters if not _has_applied(ws, name, sha, c)]
    if not missing:
        return gates.GateResult(gates.APPLIED, None)
    names = ", ".join(c.alias or c.id for c in missing[:10])
    return gates.GateResult(gates.APPLIED, (
        f"{len(missing)} of {len(clusters)} clusters of {src.name!r} have not applied "
        f"{sha[:7]}: {names}; promote again once reconcile has applied it there "
        "(--force overrides)"))


def _has_applied(ws: Workspace, name: str, sha: str, cluster: Cluster) -> bool:
    """The cluster's applied commit of source `name` is `sha` or contains it."""
    applied = applied_shas(cluster, ws.sources).get(name)
    repo = ws.source_repos.repo(name)
    return bool(applied and SHA_RE.match(applied) and repo.rev(applied) is not None
                and repo.is_ancestor(sha, applied))


def _soak(ws: Workspace, src: Channel, dst: Channel, new: Mapping[str, str],
          clusters: Sequence[Cluster], now: datetime) -> gates.GateResult:
    """Soak of the pins together: since the source clusters applied them (as recorded), else
    since they were pinned in the source channel, else since the newest of the commits."""
    assert dst.gates.soak is not None
    times = [parse_timestamp(c.status.applied_at) for c in clusters]
    known = [t for t in times if t is not None]
    if not (known and len(known) == len(times)):
        known += [t for g in src.groups if group_pins(g, ws.sources) == dict(new)
                  if (t := parse_timestamp(g.promoted_at)) is not None]
    if not known:
        known = [t for n, sha in new.items()
                 if (t := parse_timestamp(ws.source_repos.repo(n).commit_time(sha)))]
    left = dst.gates.soak - (now - max(known))
    if left.total_seconds() <= 0:
        return gates.GateResult(gates.SOAK, None)
    return gates.GateResult(gates.SOAK, (
        f"the pins have soaked in {src.name!r} for {format_duration(now - max(known))} of the "
        f"{format_duration(dst.gates.soak)} that {dst.name!r} requires; "
        f"{format_duration(left)} left (--force overrides)"))
