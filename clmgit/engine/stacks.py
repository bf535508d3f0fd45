"""CloudFormation stacks of a cluster (docs/explanation/design.md: the engine, steps 4, 5, 8): what
is applied, in which order, with which tags, and what is deleted.

The cloud side is behind the `StackBackend` seam:
`clmgit.adapters.aws.cloudformation.CloudFormationStacks` is the real one, `FakeStacks`
(clmgit_sandbox.doubles) the in-memory one for unit tests.

Order of `apply_stacks`: `cf-deletions.yaml` pre_apply, the main stack (name = `local_id`), the
`cf-manifests` stacks by name, the node-pool stacks (`nodepool-<pool>-<local_id>`), the stacks of
node pools no longer in the registry, `cf-deletions.yaml` post_apply. Each stack's outputs are
handed to the templates of the stacks after it, so a template may be given as a function of those
outputs. In CLM's layout (`clmgit.layout`) the etcd stack comes before the main stack, the
`cf-manifests` stacks keep the caller's order and are named by their templates, and stacks are
tagged, protected and found as CLM does (`clmgit.engine.clmstacks`).

`cf-deletions.yaml` reaches only the cluster's own stacks (`deletion_stack_names`): stack names
are per account and region, shared by every cluster there, so each query of a deletion carries
the cluster's own tags and a stack that carries another cluster's is never deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from clmgit.config import yamlfiles
from clmgit.config.deletions import Deletion
from clmgit.engine import clmstacks
from clmgit.errors import ApplyError, ConfigError
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster
from clmgit.stacknames import main_stack_name, node_pool_stack_name

#: Tags clmgit puts on every stack; CloudFormation propagates them to the stack's resources.
TAG_CLUSTER = "clmgit/cluster-id"
TAG_ROLE = "clmgit/role"
TAG_NODE_POOL = "clmgit/node-pool"

ROLE_MAIN = "main"
ROLE_EXTRA = "cf-manifest"
ROLE_NODE_POOL = "node-pool"
ROLE_ETCD = "etcd"


Operation = Literal["create", "update", "delete", "none"]
Outputs = Mapping[str, str]
Renderer = Callable[[Outputs], str]


@dataclass(frozen=True)
class ResourceChange:
    action: str  # CloudFormation's word: Add, Modify, Remove, Import, Dynamic
    logical_id: str
    resource_type: str


@dataclass(frozen=True)
class StackResult:
    name: str
    operation: Operation
    outputs: Outputs = field(default_factory=dict)
    changes: tuple[ResourceChange, ...] = ()
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return self.operation != "none"


@dataclass(frozen=True)
class StackInfo:
    """A stack found by its tags."""

    name: str
    tags: Mapping[str, str]
    #: Its CloudFormation status and the reason given for it ("" where not known).
    status: str = ""
    reason: str = ""


@dataclass(frozen=True)
class StackTemplate:
    """What a backend applies: the rendered template text and everything else the stack gets."""

    name: str
    body: str
    tags: Mapping[str, str]
    termination_protection: bool = False
    #: A stack policy (JSON) for each update only, as CLM passes it; "" for none.
    stack_policy: str = ""


class StackBackend(Protocol):
    def apply_stack(self, stack: StackTemplate, *, dry_run: bool) -> StackResult:
        """Create or update the stack through a change set and wait for it; "no changes" is
        success. With `dry_run`, describe the change set and change nothing."""
        ...

    def delete_stack(self, name: str, *, lift_protection: bool, dry_run: bool) -> StackResult:
        """Delete the stack and wait for it; a stack that does not exist is fine. A stack with
        termination protection is refused unless `lift_protection`."""
        ...

    def find_stacks(self, tags: Mapping[str, str]) -> list[StackInfo]:
        """The existing stacks that carry all of `tags`."""
        ...

    def stack_tags(self, name: str) -> Mapping[str, str] | None:
        """The tags of the stack `name`; None if there is no such stack."""
        ...


@dataclass(frozen=True)
class RenderedStack:
    """A stack to apply (by default one of `cf-manifests/`); `template` is its text, or a
    function of the outputs of earlier stacks."""

    name: str
    template: str | Renderer
    role: str = ROLE_EXTRA
    tags: Mapping[str, str] = field(default_factory=dict)
    node_pool: str = ""
    profile: str = ""
    stack_policy: str = ""
    #: CLM's `cf-manifests`: `name` is the template's path until the rendered template names
    #: its stack (`Metadata.StackName`); a template that renders empty makes no stack.
    named_in_template: bool = False

    def text(self, outputs: Outputs) -> str:
        return self.template if isinstance(self.template, str) else self.template(outputs)


def main_stack(cluster: Cluster, template: str | Renderer) -> RenderedStack:
    return RenderedStack(main_stack_name(cluster), template, ROLE_MAIN)


def etcd_stack(name: str, template: str | Renderer) -> RenderedStack:
    """CLM's etcd stack, with CLM's stack policy."""
    return RenderedStack(name, template, ROLE_ETCD, stack_policy=clmstacks.ETCD_STACK_POLICY)


def node_pool_stack(cluster: Cluster, pool: str, template: str | Renderer, *,
                    profile: str = "", layout: Layout = DEFAULT) -> RenderedStack:
    return RenderedStack(node_pool_stack_name(cluster, pool, layout), template, ROLE_NODE_POOL,
                         node_pool=pool, profile=profile)


def stack_tags(cluster: Cluster, stack: RenderedStack, layout: Layout = DEFAULT,
               template_tags: Mapping[str, str] | None = None) -> dict[str, str]:
    """clmgit's tags, or in CLM's layout the template's `Metadata.Tags` with CLM's on top."""
    if layout.clm:
        return {**(template_tags or {}), **stack.tags, **_clm_tags(cluster, stack)}
    tags = {**stack.tags, TAG_CLUSTER: cluster.id, TAG_ROLE: stack.role}
    if stack.node_pool:
        tags[TAG_NODE_POOL] = stack.node_pool
    return tags


def _clm_tags(cluster: Cluster, stack: RenderedStack) -> dict[str, str]:
    if stack.role == ROLE_MAIN:
        return clmstacks.main_tags(cluster)
    if stack.role == ROLE_ETCD:
        return dict(clmstacks.ETCD_TAGS)
    if stack.role == ROLE_NODE_POOL:
        return clmstacks.node_pool_tags(cluster, stack.node_pool, stack.profile)
    return clmstacks.cluster_tag(cluster)


def apply_stacks(
    backend: StackBackend,
    *,
    cluster: Cluster,
    main: RenderedStack,
    extra: Sequence[RenderedStack] = (),
    node_pools: Sequence[RenderedStack] = (),
    deletions_pre: Sequence[str] = (),
    deletions_post: Sequence[str] = (),
    on_pool_removed: Callable[[str], None] = lambda pool: None,
    dry_run: bool = False,
    layout: Layout = DEFAULT,
    etcd: RenderedStack | None = None,
    keep_pools: Sequence[str] = (),
) -> list[StackResult]:
    """Apply a cluster's stacks in the engine's order; the first failure raises `ApplyError`.

    Templates given as functions are rendered just before their stack is applied, with the
    outputs of every stack applied before (later stacks win on a name clash; in a dry run, the
    outputs the stacks have now). `on_pool_removed(pool)` is called before the stack of a node
    pool that is no longer in `node_pools` (nor in `keep_pools`) is deleted — the place to drain
    it — in dry runs too. `layout` and `etcd`: see the module's docstring.
    """
    results = [_delete(backend, name, dry_run=dry_run, layout=layout) for name in deletions_pre]
    outputs: dict[str, str] = {}
    extras = list(extra) if layout.clm else sorted(extra, key=lambda s: s.name)
    for stack in [*([etcd] if etcd else []), main, *extras, *node_pools]:
        template = _template(cluster, stack, outputs, layout)
        if template is None:
            continue
        result = backend.apply_stack(template, dry_run=dry_run)
        outputs.update(result.outputs)
        results.append(result)
    keep = {stack.node_pool for stack in node_pools} | set(keep_pools)
    for info, pool in _node_pool_stacks(backend, cluster, layout):
        if pool not in keep:
            on_pool_removed(pool)
            # CLM protects every stack it makes and lifts that for a removed pool's stack.
            results.append(backend.delete_stack(info.name, lift_protection=layout.clm,
                                                dry_run=dry_run))
    results += [_delete(backend, name, dry_run=dry_run, layout=layout)
                for name in deletions_post]
    return results


def _template(cluster: Cluster, stack: RenderedStack, outputs: Outputs,
              layout: Layout) -> StackTemplate | None:
    """What the backend gets for `stack`; None for a CLM `cf-manifests` template that renders
    empty (CLM skips those)."""
    body = stack.text(outputs)
    name, template_tags = stack.name, dict[str, str]()
    if layout.clm:
        named, template_tags = clmstacks.template_metadata(body, stack.name)
        if stack.named_in_template:
            if not body.strip() or yamlfiles.load_template(body, stack.name) is None:
                return None
            if not named:
                raise ApplyError(f"{stack.name} names no stack: CLM's layout needs "
                                 "Metadata.StackName in every cf-manifests template")
            name = named
    return StackTemplate(name, body, stack_tags(cluster, stack, layout, template_tags),
                         termination_protection=layout.clm or stack.role == ROLE_MAIN,
                         stack_policy=stack.stack_policy)


def decommission_stacks(
    backend: StackBackend, *, cluster: Cluster, dry_run: bool = False,
    layout: Layout = DEFAULT,
) -> list[StackResult]:
    """Delete every stack of the cluster, lifting termination protection: the node-pool stacks,
    the other stacks in reverse name order (a later one may use an earlier one's exports), then
    the main stack. Stacks already gone are fine. (CLM's etcd stack is not the cluster's: it
    carries no cluster tag and stays, as with CLM.)"""
    main = main_stack_name(cluster)
    found = [s for query in own_stack_tags(cluster, layout) for s in backend.find_stacks(query)
             if s.name != main and clmstacks.MAIN_STACK_TAG not in s.tags]
    pools = sorted(info.name for info, _ in _node_pool_stacks(backend, cluster, layout))
    others = sorted({s.name for s in found if s.name not in pools}, reverse=True)
    return [
        backend.delete_stack(name, lift_protection=True, dry_run=dry_run)
        for name in [*pools, *others, main]
    ]


def own_stack_tags(cluster: Cluster, layout: Layout = DEFAULT) -> list[dict[str, str]]:
    """The tag sets that mark a stack as the cluster's (one of them is enough): every stack
    query of a deletion carries one, so that it never reaches another cluster's stacks in the
    same account and region."""
    if layout.clm:
        return clmstacks.ownership_tags(cluster)
    return [{TAG_CLUSTER: cluster.id}]


def _foreign_owner(tags: Mapping[str, str], cluster: Cluster, layout: Layout) -> str:
    """The tag of `tags` that gives them to another cluster ("" if none does)."""
    for key, value in tags.items():
        if layout.clm:
            foreign = key.startswith(clmstacks.CLUSTER_TAG_PREFIX) and not any(
                key in scope for scope in own_stack_tags(cluster, layout))
        else:
            foreign = key == TAG_CLUSTER and value != cluster.id
        if foreign:
            return f"{key}: {value}"
    return ""


def deletion_stack_names(backend: StackBackend, entries: Sequence[Deletion], *,
                         cluster: Cluster, layout: Layout = DEFAULT) -> list[str]:
    """The stacks a `cf-deletions.yaml` phase deletes: those it names, or the cluster's own
    stacks that carry an entry's labels. An entry that would reach another cluster's stack —
    labels of another cluster, the name of another cluster's stack — is refused."""
    names: list[str] = []
    for entry in entries:
        if entry.name:
            tags = backend.stack_tags(entry.name) or {}
            _refuse_foreign(entry, _foreign_owner(tags, cluster, layout), cluster,
                            f"stack {entry.name} is one")
            names.append(entry.name)
        elif entry.labels or entry.allow_dangerous:  # no labels: every stack of the cluster
            names += _own_stacks_with(backend, entry, cluster, layout)
    return names


def _own_stacks_with(backend: StackBackend, entry: Deletion, cluster: Cluster,
                     layout: Layout) -> list[str]:
    """The cluster's stacks that carry the entry's labels: each query has the cluster's tags."""
    own = own_stack_tags(cluster, layout)
    queries = [{**entry.labels, **scope} for scope in own
               if all(entry.labels.get(k, v) == v for k, v in scope.items())]
    owner = _foreign_owner(entry.labels, cluster, layout)
    if not queries:  # the labels give every one of the cluster's tags another value
        owner = next(f"{k}: {entry.labels[k]}" for k, v in own[0].items()
                     if entry.labels.get(k, v) != v)
    _refuse_foreign(entry, owner, cluster, "its labels select stacks")
    return sorted({s.name for q in queries for s in backend.find_stacks(q)})


def _refuse_foreign(entry: Deletion, owner: str, cluster: Cluster, what: str) -> None:
    if owner:
        raise ConfigError(
            f"{entry.where or 'cf-deletions.yaml'}: {what} of another cluster ({owner}); a "
            f"deletion only deletes stacks of cluster {cluster.id}"
        )


def _node_pool_stacks(backend: StackBackend, cluster: Cluster,
                      layout: Layout) -> list[tuple[StackInfo, str]]:
    """The cluster's node-pool stacks, by name, with the pool each one says it belongs to."""
    if layout.clm:
        found = backend.find_stacks(clmstacks.node_pool_query(cluster))
        pool_tag = clmstacks.NODE_POOL_TAG
    else:
        found = backend.find_stacks({TAG_CLUSTER: cluster.id, TAG_ROLE: ROLE_NODE_POOL})
        pool_tag = TAG_NODE_POOL
    return [(s, s.tags.get(pool_tag, s.name)) for s in sorted(found, key=lambda s: s.name)]


def _delete(backend: StackBackend, name: str, *, dry_run: bool, layout: Layout) -> StackResult:
    # clmgit's deletions from cf-deletions.yaml never lift termination protection: a protected
    # stack named there is a mistake that must not take the cluster down. CLM protects every
    # stack and lifts it for any deletion; its layout does as CLM does.
    return backend.delete_stack(name, lift_protection=layout.clm, dry_run=dry_run)


def template_resources(body: str) -> dict[str, Any]:
    """The `Resources` of a YAML or JSON template; {} for an empty body."""
    try:
        doc = yamlfiles.load_template(body, "the template") if body.strip() else {}
    except ConfigError as e:
        raise ApplyError(str(e)) from e
    resources = doc.get("Resources") if isinstance(doc, dict) else None
    return resources if isinstance(resources, dict) else {}


def diff_resources(old_body: str, new_body: str) -> tuple[ResourceChange, ...]:
    """The resource changes between two templates, by logical id, as a change set lists them."""
    old, new = template_resources(old_body), template_resources(new_body)

    def change(action: str, logical_id: str, resource: Any) -> ResourceChange:
        kind = resource.get("Type", "") if isinstance(resource, dict) else ""
        return ResourceChange(action, logical_id, str(kind))

    return (
        *(change("Add", k, v) for k, v in new.items() if k not in old),
        *(change("Modify", k, v) for k, v in new.items() if k in old and old[k] != v),
        *(change("Remove", k, v) for k, v in old.items() if k not in new),
    )
