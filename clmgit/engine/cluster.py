"""One cluster through every step of the engine (docs/explanation/design.md: the engine), in order.

1–3. The tree at the SHA (shared per SHA), defaults merged, every template rendered before
     anything changes — with the account's real `values`, so a template that fails on them fails
     here too.
4–5. Stacks: the main stack, `cf-manifests/*`, the node pools; pools no longer in the registry
     are drained, then their stacks deleted; `cf-deletions.yaml` before and after. Each stack's
     template is rendered again with the outputs of the stacks before it.
6.   The rolling update of each node pool whose instances are outdated.
7.   Kubernetes: `pre_apply` deletions, the manifests (rendered with every stack output), then
     `post_apply` deletions.

Every step is idempotent, so a run killed anywhere is finished by the next. The cloud and the
cluster are reached through `Backends`, made per cluster by a factory: the real one on boto3 and
the official Kubernetes client (`clmgit.reconcile.backends`), in-memory doubles in unit tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from clmgit import events
from clmgit.accounts import ClmAccount
from clmgit.config.deletions import Deletion, Deletions
from clmgit.config.render import ClusterRenderer, Component, cluster_renderer, stack_name
from clmgit.config.source import ConfigSource
from clmgit.config.values import STACK_OUTPUTS, PlaceholderOutputs
from clmgit.engine.clock import Cancelled, Clock, SystemClock
from clmgit.engine.guard import LeaseCheck, LeaseExpired, guarded, no_lease_check
from clmgit.engine.karpenter import remove_orphans
from clmgit.engine.kube import KubeClient
from clmgit.engine.manifests import ObjectChange, apply_deletions, apply_manifests
from clmgit.engine.nodepools import NodePoolBackend
from clmgit.engine.rolling import drain_node_pool, roll_node_pool
from clmgit.engine.stacks import (
    RenderedStack,
    ResourceChange,
    StackBackend,
    StackResult,
    apply_stacks,
    decommission_stacks,
    deletion_stack_names,
    etcd_stack,
    main_stack,
    node_pool_stack,
)
from clmgit.errors import ClmgitError
from clmgit.layout import DEFAULT, Layout
from clmgit.model import REQUESTED, Cluster
from clmgit.stacknames import etcd_stack_name, node_pool_stack_name


@dataclass
class Backends:
    """What the engine works through for one cluster."""

    stacks: StackBackend
    pools: NodePoolBackend
    kube: KubeClient
    #: Facts about the account for the templates (`values` without stack outputs).
    values: Mapping[str, Any]


BackendFactory = Callable[[Cluster], Backends]
#: What CLM's computed values ask AWS, per cluster (None: rendered offline, from placeholders).
AccountFactory = Callable[[Cluster], ClmAccount | None]


@dataclass
class Report:
    """What the engine did (or, in a dry run, would do) to one cluster, as lines for people."""

    changes: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        self.changes.append(line)


class Engine:
    def __init__(
        self, source: ConfigSource, backends: BackendFactory, *, clock: Clock | None = None,
        layout: Layout = DEFAULT, accounts: AccountFactory = lambda cluster: None,
        on_event: Callable[[str, str], None] = lambda cluster_id, text: None,
        lease: LeaseCheck = no_lease_check,
        between_waves: Callable[[Cluster, datetime], None] = lambda cluster, now: None,
    ) -> None:
        self.source = source
        #: Asked (the cluster, the time) before each wave of a rolling update; raises
        #: `clmgit.engine.rolling.WindowClosed` to pause it there (maintenance windows).
        self.between_waves = between_waves
        #: Asked before every call to a cluster's backends (`clmgit.engine.guard`).
        self.lease = lease
        #: Hears (cluster id, what the engine is doing) during long steps: progress.
        self.on_event = on_event
        self.accounts = accounts
        self.backends = backends
        self.clock = clock or SystemClock()
        #: The config repo's layout (`clmgit.yaml`): where templates are and how stacks are named.
        self.layout = layout

    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> Report:
        account = self.accounts(cluster)
        if not dry_run:
            account = guarded(account, self._check(cluster))
        renderer = cluster_renderer(self.source, sha, cluster, self.layout, account=account)
        run = _Run(renderer, self._backends(renderer.cluster, dry_run), self.clock, dry_run,
                   events=lambda text: self.on_event(cluster.id, text),
                   before_wave=lambda: self.between_waves(cluster, self.clock.now()))
        if dry_run:
            # Nothing changes in a dry run, so nothing needs rendering twice: each template is
            # rendered once, where its stack outputs are known, and fails there.
            deletions, cf_deletions = renderer.render_deletions(run.to.values)
        else:
            rendered = renderer.render_all(run.to.values)  # step 3: fail before any change
            deletions, cf_deletions = rendered.deletions, rendered.cf_deletions
        with run.step("stacks"):
            outputs = run.stacks(cf_deletions)
        with run.step("node_pools"):
            run.roll_node_pools()
        if dry_run and cluster.lifecycle_status == REQUESTED:
            # A new cluster has no API server to ask until its main stack exists.
            values = run.values(outputs)
            count = sum(len(c.objects) for c in renderer.render_manifests(values)) + sum(
                len(renderer.render_karpenter_pool(p.name, values).objects)
                for p in renderer.karpenter_pools())
            run.report.add(f"would create {count} Kubernetes object(s) once the cluster is up")
        else:
            run.kubernetes(deletions, outputs)
        return run.report

    def decommission(self, cluster: Cluster, *, dry_run: bool = False) -> Report:
        """The engine's step 8: kube-system workloads scaled down (best effort: a cluster being
        decommissioned may be half gone), then every stack, the main stack last."""
        to = self._backends(cluster, dry_run)
        report = Report()
        try:
            for name in scale_down(to.kube, KUBE_SYSTEM, dry_run=dry_run):
                report.add(f"{'would scale' if dry_run else 'scaled'} {name} to 0")
        except (LeaseExpired, Cancelled):
            raise  # not the cluster's state: another reconciler may be at work, or a stop
        except ClmgitError as e:
            report.add(f"kube-system not scaled down: {e}")
        for result in decommission_stacks(to.stacks, cluster=cluster, dry_run=dry_run,
                                          layout=self.layout):
            if result.changed:
                report.add(_stack_line(result))
        return report


    def _backends(self, cluster: Cluster, dry_run: bool) -> Backends:
        """The cluster's backends; unless in a dry run (which holds no lease and writes
        nothing), each of them asks the lease before every call."""
        to = self.backends(cluster)
        if dry_run:
            return to
        check = self._check(cluster)
        return Backends(stacks=guarded(to.stacks, check), pools=guarded(to.pools, check),
                        kube=guarded(to.kube, check), values=to.values)

    def _check(self, cluster: Cluster) -> Callable[[], None]:
        return lambda: self.lease(cluster.id)


KUBE_SYSTEM = "kube-system"
_SCALABLE = (("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"))


def scale_down(kube: KubeClient, namespace: str, *, dry_run: bool = False) -> list[str]:
    """Scale every Deployment and StatefulSet of `namespace` to zero; what was (or would be)."""
    scaled = []
    for api_version, kind_name in _SCALABLE:
        kind = kube.resolve(kind_name, api_version)
        if kind is None:
            continue
        for obj in kube.list(kind, namespace=namespace):
            if obj.get("spec", {}).get("replicas", 1) == 0:
                continue
            name = obj["metadata"]["name"]
            if not dry_run:
                kube.patch(kind, name, {"spec": {"replicas": 0}}, namespace)
            scaled.append(f"{kind_name} {namespace}/{name}")
    return scaled


class _Run:
    """One cluster's apply: its renderer, backends and report, step by step."""

    def __init__(self, renderer: ClusterRenderer, to: Backends, clock: Clock,
                 dry_run: bool, *, events: Callable[[str], None],
                 before_wave: Callable[[], None] = lambda: None) -> None:
        self.renderer, self.to, self.clock, self.dry_run = renderer, to, clock, dry_run
        self.events = events
        self.before_wave = before_wave
        self.cluster = renderer.cluster  # defaults merged: drain settings, surge
        self.report = Report()
        #: Each stack's resource changes (a dry run's plan: what the roll will follow from).
        self.planned: dict[str, tuple[ResourceChange, ...]] = {}

    def step(self, name: str) -> AbstractContextManager[None]:
        """Tells `clmgit.events` if step `name` fails (a dry run changes nothing, so no step
        of it fails a cluster)."""
        if self.dry_run:
            return nullcontext()
        return events.failing_step(name, cluster=self.cluster.alias or self.cluster.id)

    def values(self, outputs: Mapping[str, str]) -> dict[str, Any]:
        # A dry run knows only the outputs of stacks that exist: the rest read as visible
        # placeholders, as in `clmgit render`, instead of failing the templates.
        known = _Known(outputs) if self.dry_run else dict(outputs)
        return {**self.to.values, STACK_OUTPUTS: known}

    def stacks(self, cf_deletions: Deletions) -> dict[str, str]:
        """Steps 4–5; the outputs of every stack."""
        renderer, cluster = self.renderer, self.cluster

        def stack_text(path: str) -> Callable[[Mapping[str, str]], str]:
            return lambda outputs: renderer.render_stack(path, self.values(outputs)).text

        def published(text: Callable[[Mapping[str, str]], str],
                      ) -> Callable[[Mapping[str, str]], str]:
            """`text`, and then CLM's generated files its render recorded uploaded: the
            instances' user data points at them, so they are in S3 before the stack that starts
            the instances (the etcd stack's with the etcd key, a pool's with the key of the main
            stack's outputs, known by then)."""
            def render(outputs: Mapping[str, str]) -> str:
                rendered = text(outputs)
                if renderer.account is not None and not self.dry_run:
                    renderer.clm.publish()
                return rendered
            return render

        def pool_text(name: str) -> Callable[[Mapping[str, str]], str]:
            return published(
                lambda outputs: renderer.render_node_pool_stack(name, self.values(outputs)).text)

        def removed_pool(pool: str) -> None:
            drain_node_pool(self.to.kube, self.to.pools, cluster, pool, clock=self.clock,
                            dry_run=self.dry_run)
            self.report.add(f"node pool {pool}: drained (removed from the registry)")

        layout = renderer.layout
        main_path, *extra_paths = renderer.stack_paths()
        etcd_path = renderer.etcd_stack_path()
        etcd = None if etcd_path is None else etcd_stack(
            etcd_stack_name(cluster.config_items), published(stack_text(etcd_path)))
        pools = renderer.stack_pools()
        karpenter = renderer.karpenter_pools()
        results = apply_stacks(
            self.to.stacks,
            cluster=cluster,
            main=main_stack(cluster, stack_text(main_path)),
            extra=[RenderedStack(p, stack_text(p), named_in_template=True) if layout.clm
                   else RenderedStack(stack_name(cluster, p), stack_text(p))
                   for p in extra_paths],
            node_pools=[node_pool_stack(cluster, p.name, pool_text(p.name), profile=p.profile,
                                        layout=layout) for p in pools],
            deletions_pre=deletion_stack_names(self.to.stacks, cf_deletions.pre_apply,
                                               cluster=cluster, layout=layout),
            deletions_post=deletion_stack_names(self.to.stacks, cf_deletions.post_apply,
                                                cluster=cluster, layout=layout),
            on_pool_removed=removed_pool,
            dry_run=self.dry_run,
            layout=layout,
            etcd=etcd,
            # Master pools CLM leaves alone (EKS) keep their stacks.
            keep_pools=[p.name for p in cluster.node_pools if p not in pools + karpenter],
        )
        outputs: dict[str, str] = {}
        for result in results:
            self.planned[result.name] = result.changes
            outputs.update(result.outputs)
            if result.changed:
                self.report.add(_stack_line(result))
        return outputs

    def roll_node_pools(self) -> None:
        """Step 6 (for the pools with a stack: masters first in CLM's layout)."""
        for pool in self.renderer.stack_pools():
            stack = node_pool_stack_name(self.cluster, pool.name, self.renderer.layout)
            rolled = roll_node_pool(self.to.kube, self.to.pools, self.cluster, pool.name,
                                    clock=self.clock, dry_run=self.dry_run,
                                    planned=self.planned.get(stack, ()),
                                    events=self.events, before_wave=self.before_wave)
            if rolled.replaced:
                if not self.dry_run:
                    events.emit(events.NODES_REPLACED, cluster=self.cluster.alias
                                or self.cluster.id, count=len(rolled.replaced))
                verb = "would replace" if self.dry_run else "replaced"
                self.report.add(f"node pool {pool.name}: {verb} {len(rolled.replaced)} "
                                f"node(s) in {rolled.waves} wave(s)")

    def kubernetes(self, deletions: Deletions, outputs: Mapping[str, str]) -> None:
        """Step 7: pre_apply deletions, the manifests, post_apply deletions."""
        manifests = self.renderer.render_manifests(self.values(outputs))
        with self.step("deletions"):
            self._delete(deletions.pre_apply, "pre_apply")
        with self.step("manifests"):
            changes = apply_manifests(self.to.kube, manifests, dry_run=self.dry_run)
        for change in changes:
            if change.action != "unchanged":
                where = f"{change.namespace}/" if change.namespace else ""
                self.report.add(f"{change.kind} {where}{change.name}: {self._action(change)}")
        self._report_takeover(changes)
        with self.step("deletions"):
            self._delete(deletions.post_apply, "post_apply")
        with self.step("manifests"):
            self.karpenter(outputs, manifests)

    def karpenter(self, outputs: Mapping[str, str], manifests: Sequence[Component]) -> None:
        """CLM's Karpenter pools, after the manifests (which install Karpenter's CRDs): each
        pool's `provisioners.yaml` applied, the objects of removed pools deleted."""
        if not self.renderer.layout.clm:
            return
        values = self.values(outputs)
        pools = self.renderer.karpenter_pools()
        components = [self.renderer.render_karpenter_pool(p.name, values) for p in pools]
        for change in apply_manifests(self.to.kube, components, dry_run=self.dry_run,
                                      after=manifests):
            if change.action != "unchanged":
                self.report.add(f"{change.component}: {change.kind} {change.name}: "
                                f"{self._action(change)}")
        verb = "would delete" if self.dry_run else "deleted"
        for gone in remove_orphans(self.to.kube, {p.name for p in pools}, dry_run=self.dry_run):
            self.report.add(f"Karpenter pool removed from the registry: {verb} {gone}")

    def _report_takeover(self, changes: Sequence[ObjectChange]) -> None:
        """One line for the objects whose fields clmgit took from kubectl's client-side apply
        (CLM's), which are otherwise unchanged and so not listed."""
        taken = [c for c in changes if c.taken_from]
        if taken:
            verb = "would take over" if self.dry_run else "took over"
            managers = ", ".join(sorted({m for c in taken for m in c.taken_from}))
            self.report.add(f"{verb} {len(taken)} object(s) from {managers}")

    def _action(self, change: ObjectChange) -> str:
        # "created"/"configured" would claim a change a dry run did not make
        return f"would {change.action.removesuffix('d')}" if self.dry_run else change.action

    def _delete(self, entries: Sequence[Deletion], phase: str) -> None:
        if not entries:
            return
        verb = "would delete" if self.dry_run else "deleted"
        for gone in apply_deletions(self.to.kube, entries, dry_run=self.dry_run):
            where = f"{gone.namespace}/" if gone.namespace else ""
            self.report.add(f"{phase}: {verb} {gone.kind} {where}{gone.name}")


class _Known(Mapping[str, str]):
    """Stack outputs known so far; any other key reads as a placeholder."""

    def __init__(self, outputs: Mapping[str, str]) -> None:
        self._outputs = dict(outputs)

    def __getitem__(self, key: str) -> str:
        return self._outputs[key] if key in self._outputs else PlaceholderOutputs()[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str)

    def __iter__(self) -> Iterator[str]:
        return iter(self._outputs)

    def __len__(self) -> int:
        return len(self._outputs)


def _stack_line(result: StackResult) -> str:
    verb = f"would {result.operation}" if result.dry_run else f"{result.operation}d"
    changes = ", ".join(f"{c.action} {c.logical_id}" for c in result.changes[:5])
    more = f" (+{len(result.changes) - 5} more)" if len(result.changes) > 5 else ""
    return f"stack {result.name}: {verb}" + (f" [{changes}{more}]" if changes else "")
