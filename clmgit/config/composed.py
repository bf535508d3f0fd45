"""A cluster's configuration composed from several config sources, as CLM's `CombinedSource`
composes it (channel/combined.go, provisioner/clusterpy.go).

- From the main (first) source only: the main stack, CLM's etcd stack, the node-pool stacks.
- From every source, in source order: `cf-manifests/*` stacks; `config-defaults.yaml`, each
  rendered on its own and merged key by key, the later source winning and the registry's config
  items over all; the deletion lists (every `pre_apply` before any manifest, every `post_apply`
  after all); the manifests, components renamed `<source>/<component>`.
- Each template is rendered within its own source (`manifest_hash` finds its siblings there).

Stricter than CLM: two sources that make the same stack or the same Kubernetes object are
refused before anything changes, unless `allow_override` in `clmgit.yaml` lists it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from clmgit.accounts import ClmAccount
from clmgit.adapters.git import GitRepo
from clmgit.config.clmfuncs import aws_session
from clmgit.config.defaults import render_defaults
from clmgit.config.deletions import Deletions
from clmgit.config.render import (
    ClusterRenderer,
    Component,
    RenderedCluster,
    RenderedStack,
    cf_stack_paths,
)
from clmgit.config.source import ConfigTree, GitConfigSource
from clmgit.config.templates import template_set
from clmgit.errors import ClmgitError, ConfigError, GitError
from clmgit.layout import Layout, Sources
from clmgit.model import Cluster, split_config_version

#: Separates a source's name from a path of its tree in `stack_paths` (paths have no ':').
QUALIFIER = ":"


class ComposedRenderer(ClusterRenderer):
    """The main source's renderer, with the other sources' renderers beside it."""

    def __init__(self, trees: Sequence[tuple[str, ConfigTree]], version: str, cluster: Cluster,
                 layout: Layout, *, account: ClmAccount | None,
                 allow_override: Iterable[str] = ()) -> None:
        defaults: dict[str, str] = {}
        with aws_session(account):
            for _, tree in trees:
                defaults.update(render_defaults(template_set(tree), cluster))
        super().__init__(trees[0][1], cluster, layout, account=account, defaults=defaults)
        self.version = version
        self.main_name = trees[0][0]
        self.others = {name: ClusterRenderer(tree, cluster, layout, account=account,
                                             defaults=defaults) for name, tree in trees[1:]}
        self.allow_override = frozenset(allow_override)

    def stack_paths(self) -> list[str]:
        extra = [f"{name}{QUALIFIER}{p}" for name, r in self.others.items()
                 for p in cf_stack_paths(r.tree)]
        return [*super().stack_paths(), *extra]

    def render_stack(self, path: str,
                     values: Mapping[str, Any] | None = None) -> RenderedStack:
        name, sep, rest = path.partition(QUALIFIER)
        if sep and name in self.others:
            return replace(self.others[name].render_stack(rest, values), path=path)
        return super().render_stack(path, values)

    def render_manifests(self, values: Mapping[str, Any] | None = None) -> tuple[Component, ...]:
        components = [Component(f"{name}/{c.name}", c.objects)
                      for name, r in self._renderers()
                      for c in (ClusterRenderer.render_manifests(self, values) if r is self
                                else r.render_manifests(values))]
        self._check_objects(components)
        return tuple(components)

    def render_deletions(self,
                         values: Mapping[str, Any] | None = None) -> tuple[Deletions, Deletions]:
        found = [ClusterRenderer.render_deletions(self, values) if r is self
                 else r.render_deletions(values) for _, r in self._renderers()]
        return _concat([d for d, _ in found]), _concat([cf for _, cf in found])

    def render_all(self, values: Mapping[str, Any] | None = None) -> RenderedCluster:
        rendered = super().render_all(values)
        self._check_stacks(rendered)
        return replace(rendered, sha=self.version)

    def _renderers(self) -> list[tuple[str, ClusterRenderer]]:
        return [(self.main_name, self), *self.others.items()]

    def _check_stacks(self, rendered: RenderedCluster) -> None:
        seen: dict[str, str] = {}
        for stack in (*rendered.stacks, *rendered.node_pool_stacks):
            name, sep, _ = stack.path.partition(QUALIFIER)
            source = name if sep and name in self.others else self.main_name
            self._refuse_twice(seen, f"stack/{stack.name}", source)

    def _check_objects(self, components: Sequence[Component]) -> None:
        seen: dict[str, str] = {}
        for component in components:
            source = component.name.split("/", 1)[0]
            for obj in component.objects:
                key = "/".join(p for p in (obj.kind, obj.namespace, obj.name) if p is not None)
                self._refuse_twice(seen, key, source)

    def _refuse_twice(self, seen: dict[str, str], key: str, source: str) -> None:
        first = seen.setdefault(key, source)
        if first != source and key not in self.allow_override:
            raise ConfigError(
                f"config sources {first!r} and {source!r} both define {key}; CLM would apply "
                f"both, the later winning: list {key!r} under allow_override in clmgit.yaml "
                "if that is meant")


def _concat(parts: Sequence[Deletions]) -> Deletions:
    return Deletions(tuple(d for p in parts for d in p.pre_apply),
                     tuple(d for p in parts for d in p.post_apply))


class ComposedConfigSource:
    """The trees of every config source at the SHAs a config version names, read from each
    source's repository (one `GitConfigSource` per source, opened when first read)."""

    def __init__(self, sources: Sources, repo: Callable[[str], GitRepo], *,
                 follow_symlinks: bool = False) -> None:
        """`repo`: the repository of a source by name (`workspace.SourceRepos.repo`)."""
        self.sources = sources
        self.repo = repo
        self.follow_symlinks = follow_symlinks
        self._git: dict[str, GitConfigSource] = {}

    def files(self, version: str) -> ConfigTree:
        """The main source's tree (what one tree alone can answer)."""
        return self._tree(self.sources.main.name,
                          split_config_version(version, self.sources.names)[self.sources.main.name])

    def compose(self, version: str, cluster: Cluster, layout: Layout, *,
                account: ClmAccount | None = None) -> ComposedRenderer:
        shas = split_config_version(version, self.sources.names)
        trees = [(name, self._tree(name, sha)) for name, sha in shas.items()]
        return ComposedRenderer(trees, version, cluster, layout, account=account,
                                allow_override=self.sources.allow_override)

    def _tree(self, name: str, sha: str) -> ConfigTree:
        try:
            if name not in self._git:
                self._git[name] = GitConfigSource(self.repo(name),
                                                  follow_symlinks=self.follow_symlinks)
            return self._git[name].files(sha)
        except ClmgitError as e:
            text = str(e)
            raise GitError(text if f"source {name!r}" in text
                           else f"config source {name!r}: {text}") from None


def workspace_source(sources: Sources, repo: Callable[[str], GitRepo], *,
                     follow_symlinks: bool) -> ComposedConfigSource | GitConfigSource:
    """What a command reads `cluster/` from: the composed sources when there are several,
    else this repository alone (as without `sources:`)."""
    if sources.several:
        return ComposedConfigSource(sources, repo, follow_symlinks=follow_symlinks)
    return GitConfigSource(repo(sources.main.name), follow_symlinks=follow_symlinks)
