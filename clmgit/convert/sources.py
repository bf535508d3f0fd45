"""`convert --all-sources`: every config source of a repository converted at the same ref, and
`--check` of each source rendered with the composed configuration items.

A cluster of several sources renders with the defaults of every source merged key by key (the
later source winning) and the registry's items over all (CLM's `updateDefaults` over its
`DefaultsManifests`); so each source's templates are checked, Go original against conversion,
with the record's items on top of those merged defaults, rendered from the Go originals. Stacks,
etcd and node pools come from the main source alone, so the sample clusters (without a
registry) are the main source's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from clmgit.config.computed import defaults_data
from clmgit.config.defaults import parse_defaults
from clmgit.convert.check import DEFAULTS, Checker
from clmgit.convert.migrate import Migration
from clmgit.model import Cluster


def composed_clusters(migrations: Sequence[Migration], clusters: Sequence[Cluster], *,
                      ec2: Any) -> list[Cluster]:
    """The clusters with every source's defaults (in source order) merged under their items."""
    checkers = [Checker(m.conversion.parsed, m.conversion.files, ec2=ec2) for m in migrations]
    out = []
    for cluster in clusters:
        merged: dict[str, str] = {}
        for checker in checkers:
            if DEFAULTS not in checker.paths:
                continue
            try:
                text = checker.render_go(DEFAULTS, defaults_data(cluster), {})
            except Exception:  # noqa: BLE001 - that source's own check reports the failure
                continue
            merged.update(parse_defaults(text, DEFAULTS))
        out.append(replace(cluster, config_items={**merged, **cluster.config_items}))
    return out
