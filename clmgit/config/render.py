"""Everything one cluster gets from `cluster/` at one SHA (docs/explanation/design.md: the engine,
steps 1–3).

`cluster_renderer` reads the tree (shared per SHA), renders and merges the defaults, and returns a
`ClusterRenderer`. Its `render_all` renders every template — stacks, node-pool stacks, manifests,
deletion lists — so that a broken template fails before anything is changed. The engine then
re-renders each stack with `render_stack`, passing the outputs of the stacks before it
(`values["stack_outputs"]`), because later templates may use them.

Templates see `cluster` (every registry field, `config_items` with the defaults merged,
`node_pools`) and, in node-pool templates, `node_pool`, as plain mappings; and `values`. Converted
CLM templates see CLM's data, `Cluster`, `Values` and `NodePool`, with the values CLM computes
(`computed`).

Order is part of the contract: components in sorted directory order, files inside a component in
sorted order, documents in file order; empty files and empty documents are skipped.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clmgit.accounts import ClmAccount
from clmgit.config import yamlfiles
from clmgit.config.budget import Budget
from clmgit.config.clmfuncs import aws_session
from clmgit.config.computed import NO_POOL, NODE_POOLS_DIR, ClmSession, PlaceholderAccount
from clmgit.config.defaults import DEFAULTS_PATH, render_defaults, with_defaults
from clmgit.config.deletions import CF_DELETIONS_PATH, DELETIONS_PATH, Deletions, parse_deletions
from clmgit.config.source import ConfigSource, ConfigTree
from clmgit.config.templates import template_set
from clmgit.config.values import STACK_OUTPUTS, PlaceholderOutputs, placeholder_values
from clmgit.errors import ConfigError
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster, NodePool, cluster_to_dict, is_karpenter, is_master
from clmgit.stacknames import (
    etcd_stack_name,
    extra_stack_name,
    main_stack_name,
    node_pool_stack_name,
)

MAIN_STACK_PATH = "cluster/stack.yaml"
#: CLM's layout (`clmgit.layout`): its main stack, etcd stack, stack deletions, Karpenter pools.
CLM_MAIN_STACK_PATH = "cluster/cluster.yaml"
CLM_ETCD_STACK_PATH = "cluster/etcd/stack.yaml"
CLM_CF_DELETIONS_PATH = "cluster/cf-manifests/cf-deletions.yaml"
KARPENTER_FILE = "provisioners.yaml"
ZALANDO_AWS = "zalando-aws"
CF_STACKS_DIR = "cluster/cf-manifests"
MANIFESTS_DIR = "cluster/manifests"
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class RenderedStack:
    name: str  # the CloudFormation stack's name
    path: str  # the template it was rendered from
    text: str
    node_pool: str | None = None


@dataclass(frozen=True)
class ManifestObject:
    path: str  # the file it came from
    index: int  # its place among the objects of that file
    obj: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.obj["kind"])

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def namespace(self) -> str | None:
        namespace = self.obj["metadata"].get("namespace")
        return None if namespace is None else str(namespace)


@dataclass(frozen=True)
class Component:
    name: str
    objects: tuple[ManifestObject, ...]


@dataclass(frozen=True)
class RenderedCluster:
    sha: str
    cluster: Cluster  # the registry record with the defaults merged in
    #: (CLM's etcd stack,) the main stack, then cf-manifests/ in name order
    stacks: tuple[RenderedStack, ...]
    node_pool_stacks: tuple[RenderedStack, ...]  # one per node pool, in registry order
    manifests: tuple[Component, ...]
    deletions: Deletions  # Kubernetes objects
    cf_deletions: Deletions  # CloudFormation stacks


class ClusterRenderer:
    """One cluster's templates at one SHA, its defaults merged. `values` left out (None) means the
    offline placeholders; values without `stack_outputs` get placeholder outputs."""

    def __init__(self, tree: ConfigTree, cluster: Cluster, layout: Layout = DEFAULT, *,
                 account: ClmAccount | None = None,
                 defaults: Mapping[str, str] | None = None) -> None:
        """`account`: what CLM's computed values ask (`computed`); None renders offline.
        `defaults`: the config defaults to merge (several sources); None: the tree's own."""
        self.tree = tree
        self.layout = layout
        self.templates = template_set(tree)
        self.templates.compile_ahead(tree.derived("render_order", render_order))
        self.account = account
        #: Time and output of this cluster's renders, against the limits of `budget`.
        self.budget = Budget.from_environment()
        with aws_session(account):
            self.cluster = with_defaults(cluster, render_defaults(self.templates, cluster)
                                         if defaults is None else dict(defaults))
        # Templates see plain dicts: the sandbox reads dict keys much faster than attributes.
        self._context = cluster_to_dict(self.cluster)
        self._pools = {p["name"]: p for p in self._context["node_pools"]}
        # CLM's `Cluster`, `Values`, `NodePool`
        self.clm = ClmSession(self.cluster, PlaceholderAccount(self.cluster) if account is None
                              else account)

    def render_all(self, values: Mapping[str, Any] | None = None) -> RenderedCluster:
        values = self._values(values)
        deletions, cf_deletions = self.render_deletions(values)
        etcd = self.etcd_stack_path()
        return RenderedCluster(
            sha=self.tree.ref,
            cluster=self.cluster,
            stacks=tuple(stack for p in [*([etcd] if etcd else []), *self.stack_paths()]
                         # a CLM cf-manifests template that renders empty makes no stack
                         if (stack := self.render_stack(p, values)).name),
            node_pool_stacks=tuple(self.render_node_pool_stack(p.name, values)
                                   for p in self.stack_pools()),
            manifests=(*self.render_manifests(values),
                       *(self.render_karpenter_pool(p.name, values)
                         for p in self.karpenter_pools())),
            deletions=deletions,
            cf_deletions=cf_deletions,
        )

    def stack_paths(self) -> list[str]:
        """The templates of the cluster's stacks, in the order they are applied (CLM's etcd
        stack, when there is one, comes first: `etcd_stack_path`)."""
        main = CLM_MAIN_STACK_PATH if self.layout.clm else MAIN_STACK_PATH
        if main not in self.tree:
            raise ConfigError(f"{main} is missing at {self.tree.ref}")
        return [main, *cf_stack_paths(self.tree)]

    def etcd_stack_path(self) -> str | None:
        """CLM's etcd stack template, where CLM would apply it: layout `clm`, provider
        `zalando-aws`, the file present, `manage_etcd_stack` not turned off."""
        wanted = (self.layout.clm and self.layout.manage_etcd_stack
                  and self.cluster.provider == ZALANDO_AWS)
        return CLM_ETCD_STACK_PATH if wanted and CLM_ETCD_STACK_PATH in self.tree else None

    def stack_pools(self) -> list[NodePool]:
        """The node pools that get a stack, in the order they are applied: the registry's; in
        CLM's layout master pools first (none on EKS, where CLM leaves them alone) and no
        Karpenter pools."""
        pools = self.cluster.node_pools
        if not self.layout.clm:
            return list(pools)
        masters = [p for p in pools if is_master(p.profile)] if (
            self.cluster.provider == ZALANDO_AWS) else []
        workers = [p for p in pools if not is_master(p.profile) and not is_karpenter(p.profile)]
        return [*masters, *workers]

    def karpenter_pools(self) -> list[NodePool]:
        """CLM's Karpenter pools (profile `worker-karpenter`); none in clmgit's layout."""
        return [p for p in self.cluster.node_pools if self.layout.clm and is_karpenter(p.profile)]

    def render_stack(self, path: str, values: Mapping[str, Any] | None = None) -> RenderedStack:
        text = _checked_stack(self._render(path, self._variables(values)), path)
        if path == CLM_ETCD_STACK_PATH and self.layout.clm:
            return RenderedStack(etcd_stack_name(self.cluster.config_items), path, text)
        if self.layout.clm and path != CLM_MAIN_STACK_PATH:
            return RenderedStack(_named_in_template(text, path), path, text)
        return RenderedStack(stack_name(self.cluster, path), path, text)

    def render_node_pool_stack(self, pool_name: str,
                               values: Mapping[str, Any] | None = None) -> RenderedStack:
        pool = self._pool(pool_name)
        path = f"{NODE_POOLS_DIR}/{pool.profile}/stack.yaml"
        text = self._render_pool_file(pool, path, values)
        name = node_pool_stack_name(self.cluster, pool.name, self.layout)
        return RenderedStack(name, path, _checked_stack(text, path), pool.name)

    def render_karpenter_pool(self, pool_name: str,
                              values: Mapping[str, Any] | None = None) -> Component:
        """A Karpenter pool's `provisioners.yaml`: Kubernetes objects, applied like manifests."""
        pool = self._pool(pool_name)
        path = f"{NODE_POOLS_DIR}/{pool.profile}/{KARPENTER_FILE}"
        return Component(f"node pool {pool.name}",
                         tuple(manifest_objects(self._render_pool_file(pool, path, values), path)))

    def _render_pool_file(self, pool: NodePool, path: str,
                          values: Mapping[str, Any] | None) -> str:
        if path not in self.tree:
            raise ConfigError(f"node pool {pool.name} has profile {pool.profile!r}, but {path} "
                              f"is missing at {self.tree.ref}")
        variables = self._variables(values)
        variables.update(node_pool=self._pools[pool.name], NodePool=self.clm.pool_data(pool),
                         Values=self.clm.pool_values(pool, self._values(values), tree=self.tree,
                                                     render=self._render_clm))
        return self._render(path, variables)

    def render_manifests(self, values: Mapping[str, Any] | None = None) -> tuple[Component, ...]:
        variables = self._variables(values)
        return tuple(self._component(name, variables)
                     for name in self.tree.subdirs(MANIFESTS_DIR))

    def render_deletions(self,
                         values: Mapping[str, Any] | None = None) -> tuple[Deletions, Deletions]:
        """(Kubernetes deletions, stack deletions); empty where the tree has no such file."""
        variables = self._variables(values)
        cf_path = CLM_CF_DELETIONS_PATH if self.layout.clm else CF_DELETIONS_PATH
        found = []
        for path, stacks in ((DELETIONS_PATH, False), (cf_path, True)):
            text = self._render(path, variables) if path in self.tree else ""
            if stacks and self.layout.clm:
                text = _clm_cf_deletions(text, path)
            found.append(parse_deletions(text, path, stacks=stacks))
        return found[0], found[1]

    def _component(self, name: str, variables: Mapping[str, Any]) -> Component:
        rendered: dict[str, str] = {}  # shared so that manifest_hash of a sibling renders it once
        objects: list[ManifestObject] = []
        for path in self.tree.listdir(f"{MANIFESTS_DIR}/{name}"):
            if path.endswith(YAML_SUFFIXES):
                text = self._render(path, variables, rendered=rendered)
                objects += manifest_objects(text, path)
        return Component(name, tuple(objects))

    def _pool(self, name: str) -> NodePool:
        for pool in self.cluster.node_pools:
            if pool.name == name:
                return pool
        raise ConfigError(f"cluster {self.cluster.id} has no node pool {name!r}")

    def _values(self, values: Mapping[str, Any] | None) -> Mapping[str, Any]:
        if values is None:
            return placeholder_values(self.cluster)
        if STACK_OUTPUTS not in values:
            return {**values, STACK_OUTPUTS: PlaceholderOutputs()}
        return values

    def _variables(self, values: Mapping[str, Any] | None) -> dict[str, Any]:
        values = self._values(values)
        clm_values = self.clm.values(values, tree=self.tree, render=self._render_clm)
        return {"cluster": self._context, "values": values,
                "Cluster": self.clm.cluster_data(), "Values": clm_values, "NodePool": NO_POOL}

    def _render(self, path: str, variables: Mapping[str, Any], *,
                rendered: dict[str, str] | None = None) -> str:
        with aws_session(self.account):  # CLM's functions that ask EC2 (`amiID`, ...)
            return self.templates.render(path, variables, rendered=rendered, budget=self.budget)

    def _render_clm(self, path: str, data: Mapping[str, Any]) -> str:
        """A file CLM renders to compute a value (`files.yaml`, `userdata.yaml`)."""
        return self._render(path, {"cluster": self._context, **data})


def cf_stack_paths(tree: ConfigTree) -> list[str]:
    """The templates of `cf-manifests/` stacks in a tree, in name order."""
    return [p for p in tree.listdir(CF_STACKS_DIR)
            if p.endswith(YAML_SUFFIXES) and p != CLM_CF_DELETIONS_PATH]


def render_order(tree: ConfigTree) -> list[str]:
    """The YAML files of a tree in the order a render loads them: the defaults, the deletion
    lists, the stacks, the node-pool profiles, then everything else (the manifests) by path."""
    first = [DEFAULTS_PATH, DELETIONS_PATH, CF_DELETIONS_PATH, MAIN_STACK_PATH,
             *tree.listdir(CF_STACKS_DIR),
             *(p for profile in tree.subdirs(NODE_POOLS_DIR)
               for p in tree.listdir(f"{NODE_POOLS_DIR}/{profile}"))]
    order = dict.fromkeys(p for p in first if p in tree and p.endswith(YAML_SUFFIXES))
    order.update(dict.fromkeys(sorted(p for p in tree if p.endswith(YAML_SUFFIXES))))
    return list(order)


def cluster_renderer(source: ConfigSource, sha: str, cluster: Cluster,
                     layout: Layout = DEFAULT, *,
                     account: ClmAccount | None = None) -> ClusterRenderer:
    """Steps 1–2 of the engine for one cluster: the tree at `sha`, the defaults merged. A
    source of several config sources (`clmgit.config.composed`) composes them itself."""
    compose = getattr(source, "compose", None)
    if compose is not None:
        renderer: ClusterRenderer = compose(sha, cluster, layout, account=account)
        return renderer
    return ClusterRenderer(source.files(sha), cluster, layout, account=account)


def render_cluster(source: ConfigSource, sha: str, cluster: Cluster, *,
                   values: Mapping[str, Any] | None = None,
                   layout: Layout = DEFAULT,
                   account: ClmAccount | None = None) -> RenderedCluster:
    """Every stack, node-pool stack, manifest and deletion list of `cluster` at `sha`."""
    return cluster_renderer(source, sha, cluster, layout, account=account).render_all(values)


def _named_in_template(text: str, path: str) -> str:
    """CLM's `cf-manifests` stack name: the rendered template's `Metadata.StackName` ("" for
    a template that renders empty, which makes no stack)."""
    doc = yamlfiles.load_template(text, path) if text.strip() else None
    metadata = doc.get("Metadata") if isinstance(doc, dict) else None
    name = metadata.get("StackName") if isinstance(metadata, dict) else None
    if doc is not None and not (isinstance(name, str) and name):
        raise ConfigError(f"{path} names no stack: CLM's layout needs Metadata.StackName in "
                          "every cf-manifests template")
    return name or ""


def _clm_cf_deletions(text: str, path: str) -> str:
    """CLM's `cf-deletions.yaml` (entries `stackName: <name>`) in clmgit's form (`name:`)."""
    data = yamlfiles.load_all(text, path)[0] if text.strip() else None
    if not isinstance(data, dict):
        return text
    for entries in data.values():
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and "stackName" in entry and "name" not in entry:
                entry["name"] = entry.pop("stackName")
    return json.dumps(data, default=str)  # JSON is YAML: parsed back as it was read


def stack_name(cluster: Cluster, path: str) -> str:
    """The name of the stack a template of `cluster/` makes: the main stack or a `cf-manifests/`
    one, named by its file's stem."""
    if path in (MAIN_STACK_PATH, CLM_MAIN_STACK_PATH):
        return main_stack_name(cluster)
    return extra_stack_name(cluster, posixpath.splitext(posixpath.basename(path))[0])


def _checked_stack(text: str, path: str) -> str:
    """A rendered stack template, refused here if it is not YAML (or JSON) rather than by
    CloudFormation after earlier stacks have changed. Tags such as `!Ref` are fine."""
    yamlfiles.check(text, path)
    return text


def manifest_objects(text: str, path: str) -> list[ManifestObject]:
    """The Kubernetes objects of a rendered manifest file, empty documents skipped."""
    if not text.strip():
        return []
    objects = [doc for doc in yamlfiles.load_all(text, path) if doc is not None]
    for number, obj in enumerate(objects, 1):
        _check_object(obj, f"{path}: object {number}")
    return [ManifestObject(path, i, obj) for i, obj in enumerate(objects)]


def _check_object(obj: Any, where: str) -> None:
    if not isinstance(obj, dict):
        raise ConfigError(f"{where} is not a Kubernetes object (a mapping)")
    metadata = obj.get("metadata")
    if not obj.get("apiVersion") or not obj.get("kind"):
        raise ConfigError(f"{where} needs apiVersion and kind")
    if not isinstance(metadata, dict) or not metadata.get("name"):
        raise ConfigError(f"{where} ({obj['kind']}) needs metadata.name")
