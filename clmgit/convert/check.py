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

A template that renders nothing but comments for every cluster is compared only in the `if`
around its content; the check counts the templates that rendered content (its coverage), and
`check_covering` adds variants of the clusters made to reach the others
(`clmgit.convert.variants`).
"""

from __future__ import annotations

import difflib
import hashlib
import posixpath
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clmgit.accounts import Ec2Info
from clmgit.config.clmfuncs import aws_session, clm_functions
from clmgit.config.computed import NO_POOL, ClmSession, defaults_data
from clmgit.config.defaults import parse_defaults, with_defaults
from clmgit.config.offline import OfflineAccount
from clmgit.config.source import ConfigTree
from clmgit.config.templates import TemplateSet
from clmgit.convert import evaluator
from clmgit.convert.nodes import Parsed
from clmgit.convert.variants import Reached, covering_variants
from clmgit.model import Cluster, NodePool

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
    files: list[str] = field(default_factory=list)  # the templates of the tree
    #: The files that rendered content (more than comments) for at least one cluster: only for
    #: those does "identical" prove more than the `if` around them.
    reached: set[str] = field(default_factory=set)
    #: The clusters made to reach the rest, with the config items each sets.
    variants: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Settings no variant has: CLM's original fails with them (`Cluster.ConfigItems.x=v`).
    left_out: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.differences

    @property
    def uncovered(self) -> list[str]:
        return [p for p in self.files if p not in self.reached]

    @property
    def coverage(self) -> float:
        """The share of files reached, 0..1 (1 for a tree without templates)."""
        return 1 - len(self.uncovered) / len(self.files) if self.files else 1.0

    def passes(self, *, allow_uncovered: bool) -> bool:
        return self.identical and (allow_uncovered or not self.uncovered)

    def summary(self) -> dict[str, Any]:
        """The check as the JSON report gives it."""
        return {
            "clusters": self.clusters, "renders": self.renders,
            "variants": [{"cluster": name, "sets": sets} for name, sets in self.variants.items()],
            "settings_left_out": self.left_out,
            "identical": self.identical,
            "differences": [{"cluster": d.cluster, "file": d.path, "detail": d.detail}
                            for d in self.differences],
            "coverage": {"files": len(self.files), "reached": len(self.files) -
                         len(self.uncovered), "percent": round(100 * self.coverage, 1),
                         "uncovered": self.uncovered}}


def has_content(text: str) -> bool:
    """Whether a rendering holds anything but YAML comments and white space."""
    return any(line.strip() and not line.lstrip().startswith("#")
               for line in text.splitlines())


def first_difference(expected: str, actual: str, *, context: int = 2) -> str:
    """The first differing lines of two renderings (Go's, the Jinja's): the first hunk of
    their unified diff."""
    lines = difflib.unified_diff(expected.splitlines(keepends=True),
                                 actual.splitlines(keepends=True), "go", "jinja", n=context)
    out: list[str] = []
    for line in lines:
        if line.startswith("@@") and any(o.startswith("@@") for o in out):
            break
        out.append(line)
    return "".join(out)


def _render_order(path: str) -> tuple[int, str]:
    """The order `_check_cluster` renders in: the defaults, the rest, node pools last."""
    return (0 if path == DEFAULTS else 2 if path.startswith(NODE_POOLS) else 1, path)


def check_covering(checker: Checker, clusters: Sequence[Cluster],
                   pools: Sequence[NodePool]) -> CheckResult:
    """`clusters` checked, then variants of the first with `pools` made to reach the templates
    the clusters left at comments (`clmgit.convert.variants`), checked alike."""
    result = checker.check(clusters)
    if clusters:
        trees = {path: checker.parsed[path] for path in checker.paths}
        cover = covering_variants(clusters[0], pools, result.uncovered, trees, checker.reach,
                                  items=checker.items_with_defaults(clusters[0]))
        result.variants = {v.cluster.id: v.settings for v in cover.variants}
        result.left_out = cover.left_out
        checker.check([v.cluster for v in cover.variants], result)
    return result


class Checker:
    """One converted tree against its original: parsed and compiled once, any number of
    clusters rendered."""

    def __init__(self, parsed: Mapping[str, Parsed], converted: Mapping[str, str], *,
                 ec2: Ec2Info) -> None:
        """`parsed`: the syntax trees of the originals, as the conversion made them."""
        self.ec2 = ec2
        self.paths = sorted(p for p in parsed if p.endswith(TEMPLATE_SUFFIXES))
        self.parsed = parsed
        self.templates = TemplateSet(ConfigTree("converted", {
            p: text.encode() for p, text in converted.items()}))
        self.functions = clm_functions(ec2=ec2)

    def check(self, clusters: Sequence[Cluster], result: CheckResult | None = None,
              ) -> CheckResult:
        result = result or CheckResult(files=list(self.paths))
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
        for paths, data, suffix in self._groups(cluster, defaults_go):
            go_done: dict[str, str] = {}
            jinja_done: dict[str, str] = {}
            for path in paths:
                self._compare(cluster, path, data, result, suffix=suffix, go_done=go_done,
                              jinja_done=jinja_done)

    def reach(self, cluster: Cluster, wanted: Collection[str]) -> Reached:
        """Which of `wanted` render content for `cluster`, and which fail, from the Go original
        alone: what a variant of the clusters checked would turn on (or break)."""
        reached = Reached(set(), set())
        try:
            defaults_go = self.render_go(DEFAULTS, defaults_data(cluster), {})
            groups = list(self._groups(cluster, defaults_go, wanted=wanted))
        except Exception:  # noqa: BLE001 - a variant CLM cannot render breaks everything
            reached.failed.update(wanted)
            return reached
        if DEFAULTS in wanted and has_content(defaults_go):
            reached.content.add(DEFAULTS)
        for paths, data, _suffix in groups:
            done: dict[str, str] = {}
            for path in paths:
                try:
                    text = self.render_go(path, data, done)
                except Exception:  # noqa: BLE001 - counted, the variant's maker decides
                    reached.failed.add(path)
                    continue
                if has_content(text):
                    reached.content.add(path)
        return reached

    def items_with_defaults(self, cluster: Cluster) -> dict[str, str]:
        """The config items `cluster` has with its defaults (none if they fail to render), and
        those CLM discovers (as they are discovered offline)."""
        try:
            defaults = parse_defaults(self.render_go(DEFAULTS, defaults_data(cluster), {}),
                                      DEFAULTS)
        except Exception:  # noqa: BLE001 - the check reports the defaults' failure
            defaults = {}
        merged = with_defaults(cluster, defaults)
        return dict(ClmSession(merged, OfflineAccount(merged, self.ec2)).items())

    def _groups(self, cluster: Cluster, defaults_go: str, *,
                wanted: Collection[str] | None = None,
                ) -> Iterator[tuple[list[str], dict[str, Any], str]]:
        """(templates, data, suffix of their names) for each set of templates rendered with the
        same data, as CLM renders them: every template but the defaults and node pools', with
        `.Cluster` and `.Values`; then each node pool's profile templates with `.NodePool` too.
        `wanted`: only those templates (and no pool whose profile has none of them)."""
        merged = with_defaults(cluster, parse_defaults(defaults_go, DEFAULTS))
        clm = ClmSession(merged, OfflineAccount(merged, self.ec2))
        tree = frozenset(self.paths)
        chosen = [p for p in self.paths if p != DEFAULTS and (wanted is None or p in wanted)]
        shared = [p for p in chosen if not p.startswith(NODE_POOLS)]
        root = {"Cluster": clm.cluster_data(), "NodePool": NO_POOL,
                "Values": clm.values({}, tree=tree, render=self._render_go_once)}
        if shared:
            yield shared, root, ""
        for pool in merged.node_pools:
            prefix = f"{NODE_POOLS}{pool.profile}/"
            paths = [p for p in chosen if p.startswith(prefix)]
            if not paths:
                continue
            data = {"Cluster": root["Cluster"], "NodePool": clm.pool_data(pool),
                    "Values": clm.pool_values(pool, {}, tree=tree, render=self._render_go_once)}
            yield paths, data, f"@{pool.name}"

    def _render_go_once(self, path: str, data: Any) -> str:
        """A file CLM renders to compute a value (`files.yaml`, `userdata.yaml`), from the Go
        original; a failure shows as that file's difference when it is compared."""
        try:
            return self.render_go(path, data, {})
        except Exception:  # noqa: BLE001 - reported when the file itself is compared
            return ""

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
        if has_content(go):
            result.reached.add(path)
        if go != jinja:
            result.differences.append(Difference(cluster.id, name, first_difference(go, jinja)))
            return None
        return go

    def render_go(self, path: str, data: Any, done: dict[str, str]) -> str:
        """`path` rendered as CLM renders it; `manifestHash` renders siblings into `done`."""
        if path in done:
            return done[path]
        functions = {**self.functions, "manifestHash": self._manifest_hash(path, data, done)}
        done[path] = text = evaluator.render(self.parsed[path], data, functions)
        return text

    def _manifest_hash(self, path: str, data: Any,
                       done: dict[str, str]) -> Callable[[str], str]:
        def manifest_hash(name: str) -> str:
            sibling = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            if sibling not in self.parsed:
                raise ValueError(f"manifestHash: there is no file {sibling}")
            return hashlib.sha256(self.render_go(sibling, data, done).encode()).hexdigest()
        return manifest_hash
