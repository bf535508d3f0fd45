"""CloudFormation stacks of a cluster (DESIGN.md §6 steps 4, 5 and 8): what is applied, in which
order, with which tags, and what is deleted.

The cloud side is behind the `StackBackend` seam:
`clmgit.adapters.aws.cloudformation.CloudFormationStacks` is the real one, `FakeStacks`
(clmgit.sandbox.doubles) the in-memory one for unit tests.

Order of `apply_stacks`: `cf-deletions.yaml` pre_apply, the main stack (name = `local_id`), the
`cf-manifests` stacks by name, the node-pool stacks (`nodepool-<pool>-<local_id>`), the stacks of
node pools no longer in the registry, `cf-deletions.yaml` post_apply. Each stack's outputs are
handed to the templates of the stacks after it, so a template may be given as a function of those
outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from clmgit.config import yamlfiles
from clmgit.errors import ApplyError, ConfigError
from clmgit.model import Cluster
from clmgit.stacknames import main_stack_name, node_pool_stack_name

#: Tags clmgit puts on every stack; CloudFormation propagates them to the stack's resources.
TAG_CLUSTER = "clmgit/cluster-id"
TAG_ROLE = "clmgit/role"
TAG_NODE_POOL = "clmgit/node-pool"

ROLE_MAIN = "main"
ROLE_EXTRA = "cf-manifest"
ROLE_NODE_POOL = "node-pool"


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


@dataclass(frozen=True)
class StackTemplate:
    """What a backend applies: the rendered template text and everything else the stack gets."""

    name: str
    body: str
    tags: Mapping[str, str]
    termination_protection: bool = False


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


@dataclass(frozen=True)
class RenderedStack:
    """A stack to apply; `template` is its text, or a function of the outputs of earlier stacks."""

    name: str
    template: str | Renderer
    role: str = ROLE_EXTRA
    tags: Mapping[str, str] = field(default_factory=dict)
    node_pool: str = ""

    def text(self, outputs: Outputs) -> str:
        return self.template if isinstance(self.template, str) else self.template(outputs)


def main_stack(cluster: Cluster, template: str | Renderer) -> RenderedStack:
    return RenderedStack(main_stack_name(cluster), template, ROLE_MAIN)


def extra_stack(name: str, template: str | Renderer) -> RenderedStack:
    """A stack of `cf-manifests/`."""
    return RenderedStack(name, template, ROLE_EXTRA)


def node_pool_stack(cluster: Cluster, pool: str, template: str | Renderer) -> RenderedStack:
    return RenderedStack(node_pool_stack_name(cluster, pool), template, ROLE_NODE_POOL,
                         node_pool=pool)


def stack_tags(cluster: Cluster, stack: RenderedStack) -> dict[str, str]:
    tags = {**stack.tags, TAG_CLUSTER: cluster.id, TAG_ROLE: stack.role}
    if stack.node_pool:
        tags[TAG_NODE_POOL] = stack.node_pool
    return tags


def apply_stacks(
    backend: StackBackend,
    *,
    cluster: Cluster,
    main: RenderedStack,
    extra: Sequence[RenderedStack] = (),
    node_pools: Sequence[RenderedStack] = (),
    deletions_pre: Sequence[str] = (),
    deletions_post: Sequence[str] = (),
    on_pool_removed: Callable[[str], None] | None = None,
    dry_run: bool = False,
) -> list[StackResult]:
    """Apply a cluster's stacks in DESIGN order; the first failure raises `ApplyError`.

    Templates given as functions are rendered just before their stack is applied, with the
    outputs of every stack applied before (later stacks win on a name clash; in a dry run, the
    outputs the stacks have now). `on_pool_removed(pool)` is called before the stack of a node
    pool that is no longer in `node_pools` is deleted — the place to drain it — in dry runs too.
    """
    results = [_delete(backend, name, dry_run=dry_run) for name in deletions_pre]
    outputs: dict[str, str] = {}
    for stack in [main, *sorted(extra, key=lambda s: s.name), *node_pools]:
        template = StackTemplate(stack.name, stack.text(outputs), stack_tags(cluster, stack),
                                 termination_protection=stack.role == ROLE_MAIN)
        result = backend.apply_stack(template, dry_run=dry_run)
        outputs.update(result.outputs)
        results.append(result)
    keep = {stack.name for stack in node_pools}
    for info in _node_pool_stacks(backend, cluster):
        if info.name not in keep:
            if on_pool_removed is not None:
                on_pool_removed(info.tags.get(TAG_NODE_POOL, info.name))
            results.append(_delete(backend, info.name, dry_run=dry_run))
    results += [_delete(backend, name, dry_run=dry_run) for name in deletions_post]
    return results


def decommission_stacks(
    backend: StackBackend, *, cluster: Cluster, dry_run: bool = False
) -> list[StackResult]:
    """Delete every stack of the cluster, lifting termination protection: the node-pool stacks,
    the other stacks in reverse name order (a later one may use an earlier one's exports), then
    the main stack. Stacks already gone are fine."""
    main = main_stack_name(cluster)
    found = [s for s in backend.find_stacks({TAG_CLUSTER: cluster.id}) if s.name != main]
    pools = sorted(s.name for s in found if s.tags.get(TAG_ROLE) == ROLE_NODE_POOL)
    others = sorted((s.name for s in found if s.name not in pools), reverse=True)
    return [
        backend.delete_stack(name, lift_protection=True, dry_run=dry_run)
        for name in [*pools, *others, main]
    ]


def _node_pool_stacks(backend: StackBackend, cluster: Cluster) -> list[StackInfo]:
    found = backend.find_stacks({TAG_CLUSTER: cluster.id, TAG_ROLE: ROLE_NODE_POOL})
    return sorted(found, key=lambda s: s.name)


def _delete(backend: StackBackend, name: str, *, dry_run: bool) -> StackResult:
    # Deletions from cf-deletions.yaml and of removed pools never lift termination protection:
    # a protected stack named there is a mistake that must not take the cluster down.
    return backend.delete_stack(name, lift_protection=False, dry_run=dry_run)


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
