"""In-memory doubles of the engine's seams — `Clock`, `KubeClient`, `StackBackend`,
`NodePoolBackend` — for unit tests and benchmarks of the engine's logic. Each passes the same
contract tests as its real backend (tests/engine/test_doubles_contract.py: the system clock, the
Kubernetes emulator, moto), so a unit test on a double means what it would mean on the real thing.
Production code never imports this module.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from clmgit.config.source import CONFIG_DIR, ConfigTree
from clmgit.engine.kube import (
    CRDS,
    NAMESPACES,
    NODES,
    PDBS,
    PODS,
    Kind,
    Obj,
    Objs,
    match_labels_selector,
)
from clmgit.engine.nodepools import (
    ASG,
    HEALTHY,
    IN_SERVICE,
    Instance,
    PoolState,
    check_capacity,
    is_outdated,
)
from clmgit.engine.stacks import (
    Operation,
    Outputs,
    StackInfo,
    StackResult,
    StackTemplate,
    diff_resources,
)
from clmgit.errors import ApplyError, GitError
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster
from clmgit.stacknames import node_pool_stack_name
from clmgit_sandbox.kubeapi.patch import merge_patch
from clmgit_sandbox.kubeapi.selectors import matches_labels, parse_label_selector

# --- the config repo -----------------------------------------------------------------------


class StaticConfigSource:
    """The `ConfigSource` seam in memory: trees by SHA, of which it holds, as git does, only
    what is below `cluster/`, in git's order."""

    def __init__(self, trees: Mapping[str, Mapping[str, bytes | str]]) -> None:
        self._trees = {
            sha: ConfigTree(sha, {p: d.encode() if isinstance(d, str) else d
                                  for p, d in sorted(files.items())
                                  if p.startswith(f"{CONFIG_DIR}/")})
            for sha, files in trees.items()
        }

    def files(self, sha: str) -> ConfigTree:
        try:
            return self._trees[sha]
        except KeyError:
            raise GitError(f"commit {sha} does not exist") from None


# --- time -----------------------------------------------------------------------------------


class FakeClock:
    """A clock that only moves when slept on; `on_sleep` lets a test change the world meanwhile."""

    def __init__(
        self,
        start: datetime = datetime(2026, 1, 1, tzinfo=UTC),
        *,
        on_sleep: Callable[[FakeClock], None] | None = None,
    ) -> None:
        self._now = start
        self.on_sleep = on_sleep
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        return self._now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self._now += timedelta(seconds=seconds)
        if self.on_sleep is not None:
            self.on_sleep(self)

    def advance(self, seconds: float) -> None:
        """Move time forward without counting it as a sleep."""
        self._now += timedelta(seconds=seconds)


# --- Kubernetes ---------------------------------------------------------------------------


class FakeKube:
    """An in-memory `KubeClient`: objects by kind, a resourceVersion counter, field selectors
    `spec.nodeName` and `metadata.name`. Apply replaces the given fields (no field ownership);
    eviction honours budgets with an integer `minAvailable` or `maxUnavailable` over Ready pods.
    `calls` records every write as (verb, kind, name)."""

    #: What the fake serves unless told otherwise.
    KINDS = (NODES, PODS, PDBS, NAMESPACES, CRDS)

    def __init__(self, kinds: Sequence[Kind] = KINDS) -> None:
        self.kinds = list(kinds)
        self.objects: dict[tuple[str, str, str], Obj] = {}  # (kind, namespace, name)
        self.calls: list[tuple[str, str, str]] = []
        self._versions = itertools.count(1)

    def add(self, *objects: Obj) -> None:
        """Store objects as they are (status included), as kubelet or a controller would."""
        for obj in objects:
            self._store(copy.deepcopy(obj))

    def resolve(self, kind: str, api_version: str | None = None) -> Kind | None:
        wanted = kind.lower()
        for k in self.kinds:
            if wanted in (k.kind.lower(), k.plural) and api_version in (None, k.api_version):
                return k
        return None

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> Obj | None:
        found = self.objects.get((kind.kind, namespace or "" if kind.namespaced else "", name))
        return copy.deepcopy(found) if found else None

    def list(self, kind: Kind, *, namespace: str | None = None,
             label_selector: str | None = None, field_selector: str | None = None) -> list[Obj]:
        requirements = parse_label_selector(label_selector)
        return [
            copy.deepcopy(obj) for (k, ns, _), obj in sorted(self.objects.items())
            if k == kind.kind and namespace in (None, ns)
            and matches_labels(requirements, obj) and _matches_fields(field_selector, obj)
        ]

    def apply(self, obj: Mapping[str, Any], *, dry_run: bool = False) -> Obj:
        kind = self.resolve(obj["kind"], obj["apiVersion"])
        if kind is None:
            raise ApplyError(f"no {obj['kind']} is served in {obj['apiVersion']}")
        meta = obj["metadata"]
        namespace = (meta.get("namespace") or "default") if kind.namespaced else None
        # The stored object itself: the merge copies it, so it is not changed here.
        live = self.objects.get((kind.kind, namespace or "", meta["name"]))
        new: Obj = _merge_patch(live or {}, obj)
        if kind.namespaced:
            new["metadata"]["namespace"] = namespace
        if live is not None and new == live or dry_run:
            return new
        self.calls.append(("apply", kind.kind, meta["name"]))
        if kind == CRDS:
            self._learn(new)
        return self._store(new)

    def patch(self, kind: Kind, name: str, patch: Mapping[str, Any],
              namespace: str | None = None) -> Obj:
        live = self.get(kind, name, namespace)
        if live is None:
            raise ApplyError(f"{kind.kind} {name} not found")
        self.calls.append(("patch", kind.kind, name))
        return self._store(_merge_patch(live, patch))

    def delete(self, kind: Kind, name: str, *, namespace: str | None = None,
               propagation_policy: str | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> bool:
        key = (kind.kind, namespace or "" if kind.namespaced else "", name)
        if key not in self.objects:
            return False
        if not dry_run:
            self.calls.append(("delete", kind.kind, name))
            del self.objects[key]
        return True

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None) -> bool:
        pod = self.get(PODS, name, namespace)
        if pod is None:
            return True
        if _ready(pod) and any(not self._allows_disruption(pdb)
                               for pdb in self._budgets_of(pod)):
            return False
        return self.delete(PODS, name, namespace=namespace)

    def _budgets_of(self, pod: Obj) -> Objs:
        return [pdb for pdb in self.list(PDBS, namespace=pod["metadata"]["namespace"])
                if (s := match_labels_selector(pdb["spec"].get("selector")))
                and matches_labels(parse_label_selector(s), pod)]

    def _allows_disruption(self, pdb: Obj) -> bool:
        selector = match_labels_selector(pdb["spec"].get("selector"))
        pods = self.list(PODS, namespace=pdb["metadata"]["namespace"], label_selector=selector)
        healthy = sum(1 for p in pods if _ready(p))
        spec = pdb["spec"]
        if "maxUnavailable" in spec:
            return len(pods) - healthy < int(spec["maxUnavailable"])
        return healthy > int(spec.get("minAvailable", 0))

    def _learn(self, crd: Obj) -> None:
        spec, names = crd["spec"], crd["spec"]["names"]
        for version in spec.get("versions") or []:
            self.kinds.append(Kind(f"{spec['group']}/{version['name']}", names["kind"],
                                   spec.get("scope", "Namespaced") == "Namespaced",
                                   names["plural"]))

    def _store(self, obj: Obj) -> Obj:
        kind = self.resolve(obj["kind"], obj.get("apiVersion"))
        namespaced = kind.namespaced if kind else bool(obj["metadata"].get("namespace"))
        meta = obj["metadata"]
        meta["resourceVersion"] = str(next(self._versions))
        namespace = meta.get("namespace", "") if namespaced else ""
        self.objects[(obj["kind"], namespace, meta["name"])] = obj
        return copy.deepcopy(obj)


def _merge_patch(target: Any, patch: Any) -> Any:
    # The fake patches and matches labels with the emulator's code: one implementation of each.
    return merge_patch(target, patch)


def _ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _matches_fields(selector: str | None, obj: Obj) -> bool:
    for requirement in filter(None, (selector or "").split(",")):
        path, _, wanted = requirement.partition("=")
        value: Any = obj
        for part in path.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if (value or "") != wanted:
            return False
    return True


# --- CloudFormation -------------------------------------------------------------------------


@dataclass(frozen=True)
class FakeStack:
    body: str
    tags: Mapping[str, str]
    protected: bool = False
    policy: str = ""


class FakeStacks:
    """An in-memory `StackBackend` for unit tests.

    Outputs cannot be computed from a template here: a test sets them per stack in `outputs`,
    and they are reported once the stack exists. `failures` maps a stack name to the reason its
    apply fails with. `calls` records every change made, as (operation, stack name).
    """

    def __init__(
        self,
        *,
        outputs: Mapping[str, Outputs] | None = None,
        failures: Mapping[str, str] | None = None,
    ) -> None:
        self.stacks: dict[str, FakeStack] = {}
        self.outputs = dict(outputs or {})
        self.failures = dict(failures or {})
        self.calls: list[tuple[str, str]] = []
        #: A stack's CloudFormation status, for health checks (default: CREATE_COMPLETE).
        self.statuses: dict[str, str] = {}

    def apply_stack(self, stack: StackTemplate, *, dry_run: bool) -> StackResult:
        current = self.stacks.get(stack.name)
        old_body = current.body if current else ""
        changes = diff_resources(old_body, stack.body)
        if current is None:
            operation: Operation = "create"
        elif changes or current.tags != stack.tags:
            operation = "update"
        else:
            operation = "none"
        if operation != "none" and stack.name in self.failures:
            raise ApplyError(f"stack {stack.name} failed: {self.failures[stack.name]}")
        if not dry_run:
            protected = stack.termination_protection or (current is not None and current.protected)
            # As on CloudFormation: a policy is set before an update, a new stack has none.
            policy = (stack.stack_policy or current.policy) if current is not None else ""
            self.stacks[stack.name] = FakeStack(stack.body, dict(stack.tags), protected, policy)
            if operation != "none":
                self.calls.append((operation, stack.name))
        exists = stack.name in self.stacks
        outputs = self.outputs.get(stack.name, {}) if exists else {}
        return StackResult(stack.name, operation, dict(outputs), changes, dry_run)

    def delete_stack(self, name: str, *, lift_protection: bool, dry_run: bool) -> StackResult:
        current = self.stacks.get(name)
        if current is None:
            return StackResult(name, "none", dry_run=dry_run)
        if current.protected and not lift_protection:
            raise ApplyError(f"stack {name} has termination protection and is not deleted")
        if not dry_run:
            if current.protected:
                self.stacks[name] = replace(current, protected=False)
                self.calls.append(("unprotect", name))
            del self.stacks[name]
            self.calls.append(("delete", name))
        return StackResult(name, "delete", dry_run=dry_run)

    def find_stacks(self, tags: Mapping[str, str]) -> list[StackInfo]:
        return [
            StackInfo(name, stack.tags, self.statuses.get(name, "CREATE_COMPLETE"))
            for name, stack in self.stacks.items()
            if all(stack.tags.get(k) == v for k, v in tags.items())
        ]

    def stack_tags(self, name: str) -> Mapping[str, str] | None:
        stack = self.stacks.get(name)
        return None if stack is None else dict(stack.tags)


# --- node pools -----------------------------------------------------------------------------


class FakeNodePools:
    """An in-memory `NodePoolBackend`: groups launch instances at once, round-robin over their
    AZs, with the launch settings they have at that moment. `roll` changes those settings, as a
    changed node-pool template would. `calls` records every change, as (operation, target)."""

    def __init__(self, layout: Layout = DEFAULT) -> None:
        self.layout = layout  # which name a pool's stack has
        self.groups: dict[str, tuple[str, ASG]] = {}  # name -> (stack name, group)
        self.instances: dict[str, Instance] = {}
        self.calls: list[tuple[str, str]] = []
        self._ids = itertools.count(1)

    def add_group(self, cluster: Cluster, pool: str, asg: ASG) -> None:
        stack = node_pool_stack_name(cluster, pool, self.layout)
        self.groups[asg.name] = (stack, replace(asg, desired_capacity=0))
        self._scale(asg.name, asg.desired_capacity)

    def roll(self, asg: str, *, version: str, instance_types: tuple[str, ...] = ()) -> None:
        stack, group = self.groups[asg]
        self.groups[asg] = (stack, replace(
            group, launch_template_version=version,
            instance_types=instance_types or group.instance_types,
        ))

    def pool_state(self, cluster: Cluster, pool: str) -> PoolState:
        stack = node_pool_stack_name(cluster, pool, self.layout)
        asgs = tuple(group for s, group in self.groups.values() if s == stack)
        names = {a.name: a for a in asgs}
        instances = tuple(
            replace(i, outdated=is_outdated(
                names[i.asg], launch_template_id=i.launch_template_id,
                launch_template_version=i.launch_template_version, instance_type=i.instance_type,
            ))
            for i in self.instances.values()
            if i.asg in names
        )
        return PoolState(pool, asgs, instances)

    def set_desired_capacity(self, asg: str, desired: int) -> None:
        check_capacity(asg, desired, self.groups[asg][1].max_size)
        self.calls.append(("scale", f"{asg}={desired}"))
        self._scale(asg, desired)

    def terminate_instance(self, instance_id: str, *, decrement_capacity: bool) -> None:
        instance = self.instances.pop(instance_id, None)
        if instance is None:
            return
        self.calls.append(("terminate", instance_id))
        stack, group = self.groups[instance.asg]
        desired = group.desired_capacity - 1 if decrement_capacity else group.desired_capacity
        self.groups[instance.asg] = (stack, replace(group, desired_capacity=desired))
        self._scale(instance.asg, desired)

    def wait_for_instances_in_service(self, asg: str) -> None:
        """Instances of the fake are in service from the start."""

    def _scale(self, asg: str, desired: int) -> None:
        stack, group = self.groups[asg]
        self.groups[asg] = (stack, replace(group, desired_capacity=desired))
        mine = [i for i in self.instances.values() if i.asg == asg]
        for instance in mine[desired:]:
            del self.instances[instance.id]
        for n in range(len(mine), desired):
            self._launch(group, az=group.availability_zones[n % len(group.availability_zones)])

    def _launch(self, group: ASG, *, az: str) -> None:
        instance_id = f"i-{next(self._ids):017x}"
        self.instances[instance_id] = Instance(
            id=instance_id, asg=group.name, az=az,
            launch_template_id=group.launch_template_id,
            launch_template_version=group.launch_template_version,
            instance_type=group.instance_types[0] if group.instance_types else "",
            lifecycle_state=IN_SERVICE, health=HEALTHY, outdated=False,
        )
