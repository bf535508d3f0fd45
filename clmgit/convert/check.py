"""The proof of a conversion: every template of a cluster rendered both ways — the Go original
with the evaluator (as CLM renders it: `missingkey=error`), the converted Jinja with clmgit's
renderer (`TemplateSet`, the project's environment with CLM's functions) — and the outputs
compared byte for byte.

Per cluster, as CLM renders it: `config-defaults.yaml` with the record alone, its keys merged
under the record's config items; then every other template with `.Cluster` and `.Values`, and the
templates of `node-pools/<profile>/` once per node pool of that profile with `.NodePool` too.
Both sides get the same data, built as clmgit's renderer builds it (`clmgit.config.computed`,
the Go original rendering the files the values need, as CLM does) on a stand-in for the
cluster's account (`clmgit.config.offline.OfflineAccount`) with the chosen EC2 answers; so any
difference is the conversion's.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clmgit.adapters.aws.ec2info import Ec2Info
from clmgit.config.clmfuncs import aws_session, clm_functions
from clmgit.config.computed import ClmSession, defaults_data
from clmgit.config.defaults import parse_defaults, with_defaults
from clmgit.config.offline import OfflineAccount
from clmgit.config.source import ConfigTree
from clmgit.config.templates import TemplateSet
from clmgit.convert import evaluator
from clmgit.convert.both import first_difference
from clmgit.convert.nodes import Parsed
from clmgit.convert.parser import parse
from clmgit.model import Cluster

DEFAULTS = "cluster/config-defaults.yaml"
NODE_POOLS = "cluster/node-pools/"
TEMPLATE_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Difference:
    cluster: str
    path: str  # `path@pool` for a node pool's file
    detail: str  # the first differing lines, or why a side could not render


@dataclass
class CheckResult:
    clusters: list[str] = field(default_factory=list)
    renders: int = 0  # files rendered both ways and compared
    differences: list[Difference] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.differences


def _render_order(path: str) -> tuple[int, str]:
    """The order `_check_cluster` renders in: the defaults, the rest, node pools last."""
    return (0 if path == DEFAULTS else 2 if path.startswith(NODE_POOLS) else 1, path)


class Checker:
    """One converted tree against its original: parsed and compiled once, any number of
    clusters rendered."""

    def __init__(self, original: Mapping[str, str], converted: Mapping[str, str], *,
                 ec2: Ec2Info | Any, parsed: Mapping[str, Parsed] | None = None) -> None:
        """`parsed`: syntax trees of the originals already made (by the conversion)."""
        self.ec2 = ec2
        self.paths = sorted(p for p in original if p.endswith(TEMPLATE_SUFFIXES))
        self._sources = original
        self._parsed: dict[str, Parsed] = dict(parsed or {})
        self.templates = TemplateSet(ConfigTree("converted", {
            p: text.encode() for p, text in converted.items()}))
        self.functions = clm_functions(ec2=ec2)

    def check(self, clusters: Sequence[Cluster], result: CheckResult | None = None,
              ) -> CheckResult:
        result = result or CheckResult()
        if clusters:  # the other cores compile the conversion from the end meanwhile
            self.templates.compile_ahead(sorted(self.paths, key=_render_order))
        for cluster in clusters:
            result.clusters.append(cluster.id)
            self._check_cluster(cluster, result)
        return result

    def _check_cluster(self, cluster: Cluster, result: CheckResult) -> None:
        defaults_go = self._compare(cluster, DEFAULTS, defaults_data(cluster), result)
        if defaults_go is None:
            return  # nothing else renders as CLM would without the defaults
        merged = with_defaults(cluster, parse_defaults(defaults_go, DEFAULTS))
        clm = ClmSession(merged, OfflineAccount(merged, self.ec2))
        tree = frozenset(self.paths)
        root = {"Cluster": clm.cluster_data(), "NodePool": None,
                "Values": clm.values({}, tree=tree, render=self._render_go_once)}
        shared = [p for p in self.paths if p != DEFAULTS and not p.startswith(NODE_POOLS)]
        self._compare_all(cluster, shared, root, result, suffix="")
        for pool in merged.node_pools:
            prefix = f"{NODE_POOLS}{pool.profile}/"
            paths = [p for p in self.paths if p.startswith(prefix)]
            if not paths:
                continue
            data = {"Cluster": root["Cluster"], "NodePool": clm.pool_data(pool),
                    "Values": clm.pool_values(pool, {}, tree=tree, render=self._render_go_once)}
            self._compare_all(cluster, paths, data, result, suffix=f"@{pool.name}")

    def _render_go_once(self, path: str, data: Any) -> str:
        """A file CLM renders to compute a value (`files.yaml`, `userdata.yaml`), from the Go
        original; a failure shows as that file's difference when it is compared."""
        try:
            return self.render_go(path, data, {})
        except Exception:  # noqa: BLE001 - reported when the file itself is compared
            return ""

    def _compare_all(self, cluster: Cluster, paths: list[str], data: dict[str, Any],
                     result: CheckResult, *, suffix: str) -> None:
        go_done: dict[str, str] = {}
        jinja_done: dict[str, str] = {}
        for path in paths:
            self._compare(cluster, path, data, result, suffix=suffix, go_done=go_done,
                          jinja_done=jinja_done)

    def _compare(self, cluster: Cluster, path: str, data: dict[str, Any], result: CheckResult,
                 *, suffix: str = "", go_done: dict[str, str] | None = None,
                 jinja_done: dict[str, str] | None = None) -> str | None:
        """Render `path` both ways; the Go output, or None when the two differ or one fails."""
        name = path + suffix
        try:
            go = self.render_go(path, data, go_done if go_done is not None else {})
        except Exception as e:  # noqa: BLE001 - reported as this file's difference
            result.differences.append(Difference(cluster.id, name, f"Go rendering failed: {e}"))
            return None
        try:
            with aws_session(self.ec2):
                jinja = self.templates.render(path, data, rendered=jinja_done)
        except Exception as e:  # noqa: BLE001 - reported as this file's difference
            result.differences.append(Difference(cluster.id, name,
                                                 f"Jinja rendering failed: {e}"))
            return None
        result.renders += 1
        if go != jinja:
            result.differences.append(Difference(cluster.id, name, first_difference(go, jinja)))
            return None
        return go

    def render_go(self, path: str, data: Any, done: dict[str, str]) -> str:
        """`path` rendered as CLM renders it; `manifestHash` renders siblings into `done`."""
        if path in done:
            return done[path]
        functions = {**self.functions, "manifestHash": self._manifest_hash(path, data, done)}
        parsed = self._parsed.get(path)
        if parsed is None:
            parsed = self._parsed[path] = parse(self._sources[path], path)
        done[path] = text = evaluator.render(parsed, data, functions, missing_key="error")
        return text

    def _manifest_hash(self, path: str, data: Any,
                       done: dict[str, str]) -> Callable[[str], str]:
        def manifest_hash(name: str) -> str:
            sibling = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            if sibling not in self._sources:
                raise ValueError(f"manifestHash: there is no file {sibling}")
            return hashlib.sha256(self.render_go(sibling, data, done).encode()).hexdigest()
        return manifest_hash
