"""The in-memory doubles of clmgit_sandbox.doubles against the real backends they stand in for:
every test here runs on both, so a unit test on a double means what it would on the real thing.

- `Clock`: `FakeClock` and `SystemClock`;
- `KubeClient`: `FakeKube` and `KubeAPI` on the Kubernetes emulator over HTTP;
- `StackBackend`: `FakeStacks` and `CloudFormationStacks` on moto;
- `NodePoolBackend`: `FakeNodePools` and `AutoScalingPools` on moto (groups made by a real stack).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, timedelta
from typing import Any

import boto3
import pytest
from clmgit_sandbox.aws import ACCOUNT, REGION
from clmgit_sandbox.doubles import FakeClock, FakeKube, FakeNodePools, FakeStacks
from clmgit_sandbox.kubeapi.fixtures import (
    make_namespace,
    make_node,
    make_pdb,
    make_pod,
    make_replicaset,
)

from clmgit.adapters.aws.autoscaling import AutoScalingPools
from clmgit.adapters.aws.cloudformation import CloudFormationStacks
from clmgit.adapters.kube import KubeAPI
from clmgit.engine.clock import Backoff, Clock, SystemClock
from clmgit.engine.kube import NODES, PDBS, PODS, Kind, KubeClient, Obj
from clmgit.engine.nodepools import ASG, NodePoolBackend
from clmgit.engine.stacks import (
    StackBackend,
    StackTemplate,
    apply_stacks,
    main_stack,
    node_pool_stack,
)
from clmgit.errors import ApplyError
from clmgit.model import Cluster, NodePool
from clmgit.stacknames import node_pool_stack_name
from tests.helpers import cfn_templates as t

FAST = Backoff(initial=1, factor=2, maximum=8, timeout=120)
CONFIGMAPS = Kind("v1", "ConfigMap", True, "configmaps")

# --- Clock ----------------------------------------------------------------------------------


@pytest.mark.parametrize("clock", [FakeClock(), SystemClock()], ids=["fake", "system"])
def test_a_clock_tells_utc_and_moves_by_what_is_slept(clock: Clock) -> None:
    before = clock.now()
    clock.sleep(0.02)
    after = clock.now()
    assert before.tzinfo is not None and before.utcoffset() == timedelta(0)
    assert after.tzinfo == UTC or after.utcoffset() == timedelta(0)
    assert after - before >= timedelta(seconds=0.02)


# --- KubeClient -----------------------------------------------------------------------------


@dataclass
class Kube:
    client: KubeClient
    seed: Callable[..., Any]  # store objects as kubelet or a controller would, status included


@pytest.fixture(params=["fake", "emulator"])
def kube(request: pytest.FixtureRequest) -> Iterator[Kube]:
    if request.param == "fake":
        fake = FakeKube((*FakeKube.KINDS, CONFIGMAPS))
        yield Kube(fake, fake.add)
        return
    server = request.getfixturevalue("kube_server")
    api = request.getfixturevalue("api_client")
    yield Kube(KubeAPI(api, clock=FakeClock()), server.seed)


def pod(name: str, **kwargs: Any) -> Obj:
    return make_pod(name, labels={"app": "a"}, **kwargs)


def test_kinds_resolve_by_kind_or_plural_in_any_case_and_unknown_ones_do_not(kube: Kube) -> None:
    assert kube.client.resolve("pod") == kube.client.resolve("Pod") == PODS
    assert kube.client.resolve("pods") == PODS
    assert kube.client.resolve("Node", "v1") == NODES
    assert kube.client.resolve("Pod", "v2") is None
    assert kube.client.resolve("Widget") is None


def test_apply_creates_in_the_default_namespace_and_an_identical_apply_changes_nothing(
    kube: Kube,
) -> None:
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
                "data": {"a": "1"}}
    kind = kube.client.resolve("ConfigMap")
    assert kind == CONFIGMAPS
    created = kube.client.apply(manifest)
    assert created["metadata"]["namespace"] == "default" and created["data"] == {"a": "1"}
    again = kube.client.apply(manifest)
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    stored = kube.client.get(kind, "cm", "default")
    assert stored is not None and stored["data"] == {"a": "1"}


def test_a_dry_run_apply_answers_the_object_and_stores_nothing(kube: Kube) -> None:
    node = make_node("n9")
    answer = kube.client.apply(node, dry_run=True)
    assert answer["metadata"]["name"] == "n9"
    assert kube.client.get(NODES, "n9") is None


def test_list_filters_by_namespace_labels_and_fields(kube: Kube) -> None:
    kube.seed(make_namespace("other"), pod("p1", node="n1"), pod("p2", node="n2"),
              make_pod("q1", node="n1", labels={"app": "b"}),
              pod("r1", node="n1", namespace="other"))

    def names(**query: Any) -> list[str]:
        return sorted(p["metadata"]["name"] for p in kube.client.list(PODS, **query))

    assert names(namespace="default") == ["p1", "p2", "q1"]
    assert names() == ["p1", "p2", "q1", "r1"]
    assert names(namespace="default", label_selector="app=a") == ["p1", "p2"]
    assert names(label_selector="app=a", field_selector="spec.nodeName=n1") == ["p1", "r1"]
    assert names(field_selector="metadata.name=q1") == ["q1"]
    assert all(p["kind"] == "Pod" for p in kube.client.list(PODS))


def test_merge_patch_sets_and_removes_keys(kube: Kube) -> None:
    kube.seed(make_node("n1", labels={"keep": "1", "drop": "1"}))
    patched = kube.client.patch(NODES, "n1", {"metadata": {"labels": {"drop": None, "new": "2"}},
                                              "spec": {"unschedulable": True}})
    assert patched["metadata"]["labels"] == {**patched["metadata"]["labels"], "keep": "1",
                                             "new": "2"}
    assert "drop" not in patched["metadata"]["labels"]
    stored = kube.client.get(NODES, "n1")
    assert stored is not None and stored["spec"]["unschedulable"] is True


def test_patching_a_missing_object_fails(kube: Kube) -> None:
    with pytest.raises(ApplyError):
        kube.client.patch(NODES, "nowhere", {"spec": {"unschedulable": True}})


def test_delete_says_whether_there_was_something_to_delete(kube: Kube) -> None:
    kube.seed(make_node("n1"))
    assert kube.client.delete(NODES, "n1", dry_run=True) is True
    assert kube.client.get(NODES, "n1") is not None
    assert kube.client.delete(NODES, "n1") is True
    assert kube.client.get(NODES, "n1") is None
    assert kube.client.delete(NODES, "n1") is False


def test_eviction_honours_a_budget_and_a_missing_pod_counts_as_evicted(kube: Kube) -> None:
    rs = make_replicaset("a", labels={"app": "a"}, replicas=2)
    kube.seed(rs, pod("a-1", node="n1"), pod("a-2", node="n2"), pod("free", node="n1"))
    kube.client.delete(PODS, "free", namespace="default")
    kube.seed(make_pdb("a", match_labels={"app": "a"}, min_available=2))

    assert kube.client.evict("default", "a-1") is False  # the budget wants both
    assert kube.client.get(PODS, "a-1", "default") is not None
    kube.client.delete(PDBS, "a", namespace="default")
    assert kube.client.evict("default", "a-1") is True
    assert kube.client.get(PODS, "a-1", "default") is None
    assert kube.client.evict("default", "gone") is True


# --- StackBackend ---------------------------------------------------------------------------


def new_cluster() -> Cluster:
    local_id = f"kube-{uuid.uuid4().hex[:8]}"
    return Cluster(id=f"aws:{ACCOUNT}:{REGION}:{local_id}", local_id=local_id, region=REGION,
                   node_pools=(NodePool(name="default", profile="worker", min_size=0,
                                        max_size=4),))


@pytest.fixture(params=["fake", "moto"])
def stacks(request: pytest.FixtureRequest) -> StackBackend:
    if request.param == "fake":
        return FakeStacks()
    request.getfixturevalue("moto_endpoint")
    return CloudFormationStacks(boto3.Session(region_name=REGION), clock=FakeClock(),
                                backoff=FAST)


def template(name: str, body: str, **tags: str) -> StackTemplate:
    return StackTemplate(name, body, {"clmgit.io/test": name, **tags})


def test_a_stack_is_created_left_alone_updated_found_by_tags_and_deleted(
    stacks: StackBackend,
) -> None:
    name = f"contract-{uuid.uuid4().hex[:8]}"
    first = stacks.apply_stack(template(name, t.MAIN), dry_run=False)
    assert first.operation == "create"
    assert [c.logical_id for c in first.changes] == ["WorkerSecurityGroup"]
    assert stacks.apply_stack(template(name, t.MAIN), dry_run=False).operation == "none"

    bigger = t.MAIN.replace("Outputs:", "  Other:\n    Type: AWS::EC2::SecurityGroup\n"
                            "    Properties:\n      GroupDescription: other\nOutputs:")
    preview = stacks.apply_stack(template(name, bigger), dry_run=True)
    assert (preview.operation, [c.action for c in preview.changes]) == ("update", ["Add"])
    assert stacks.apply_stack(template(name, bigger), dry_run=False).operation == "update"

    [found] = stacks.find_stacks({"clmgit.io/test": name})
    assert found.name == name
    assert stacks.stack_tags(name) == {"clmgit.io/test": name}
    assert stacks.delete_stack(name, lift_protection=False, dry_run=False).operation == "delete"
    assert stacks.find_stacks({"clmgit.io/test": name}) == []
    assert stacks.stack_tags(name) is None
    assert stacks.delete_stack(name, lift_protection=False, dry_run=False).operation == "none"


def test_a_protected_stack_is_deleted_only_when_protection_may_be_lifted(
    stacks: StackBackend,
) -> None:
    name = f"contract-{uuid.uuid4().hex[:8]}"
    protected = StackTemplate(name, t.MAIN, {"clmgit.io/test": name}, termination_protection=True)
    stacks.apply_stack(protected, dry_run=False)
    with pytest.raises(ApplyError, match="termination protection"):
        stacks.delete_stack(name, lift_protection=False, dry_run=False)
    assert stacks.delete_stack(name, lift_protection=True, dry_run=False).operation == "delete"
    assert stacks.find_stacks({"clmgit.io/test": name}) == []


# --- NodePoolBackend ------------------------------------------------------------------------


@dataclass
class Pools:
    backend: NodePoolBackend
    make_group: Callable[[Cluster, int], None]  # a pool "default" of one group, `desired` big


@pytest.fixture(params=["fake", "moto"])
def pools(request: pytest.FixtureRequest) -> Pools:
    if request.param == "fake":
        fake = FakeNodePools()

        def fake_group(cluster: Cluster, desired: int) -> None:
            fake.add_group(cluster, "default", ASG(
                f"asg-{cluster.local_id}", min_size=0, max_size=4, desired_capacity=desired,
                availability_zones=("eu-central-1a", "eu-central-1b"), launch_template_id="lt-1",
                launch_template_version="1", instance_types=("t3.micro",)))

        return Pools(fake, fake_group)
    request.getfixturevalue("moto_endpoint")
    session = boto3.Session(region_name=REGION)
    stack_backend = CloudFormationStacks(session, clock=FakeClock(), backoff=FAST)
    real = AutoScalingPools(session, clock=FakeClock(), backoff=FAST)

    def real_group(cluster: Cluster, desired: int) -> None:
        apply_stacks(stack_backend, cluster=cluster, main=main_stack(cluster, t.MAIN),
                     node_pools=[node_pool_stack(cluster, "default",
                                                 t.node_pool(desired=desired))])

    return Pools(real, real_group)


def test_a_pool_lists_its_group_and_current_instances_in_its_zones(pools: Pools) -> None:
    cluster = new_cluster()
    pools.make_group(cluster, 2)
    state = pools.backend.pool_state(cluster, "default")
    [asg] = state.asgs
    assert (asg.desired_capacity, asg.max_size, asg.instance_types) == (2, 4, ("t3.micro",))
    assert len(state.instances) == 2 and not state.outdated
    assert asg.availability_zones == ("eu-central-1a", "eu-central-1b")
    assert {i.az for i in state.instances} <= set(asg.availability_zones)
    assert {(i.asg, i.lifecycle_state) for i in state.instances} == {(asg.name, "InService")}
    assert node_pool_stack_name(cluster, "default").endswith(cluster.local_id)
    other = new_cluster()  # pools of another cluster are apart
    assert pools.backend.pool_state(other, "default").instances == ()


def test_a_pool_scales_within_its_bounds_and_terminates_with_or_without_replacement(
    pools: Pools,
) -> None:
    cluster = new_cluster()
    pools.make_group(cluster, 1)
    [asg] = pools.backend.pool_state(cluster, "default").asgs
    pools.backend.set_desired_capacity(asg.name, 3)
    pools.backend.wait_for_instances_in_service(asg.name)
    state = pools.backend.pool_state(cluster, "default")
    assert (state.asgs[0].desired_capacity, len(state.instances)) == (3, 3)
    with pytest.raises(ApplyError, match="max_size"):
        pools.backend.set_desired_capacity(asg.name, 5)

    first, second, _ = (i.id for i in state.instances)
    pools.backend.terminate_instance(first, decrement_capacity=True)
    after = pools.backend.pool_state(cluster, "default")
    assert after.asgs[0].desired_capacity == 2 and first not in {i.id for i in after.instances}
    pools.backend.terminate_instance(second, decrement_capacity=False)
    pools.backend.terminate_instance(second, decrement_capacity=False)  # again: no second loss
    pools.backend.wait_for_instances_in_service(asg.name)
    replaced = pools.backend.pool_state(cluster, "default")
    assert replaced.asgs[0].desired_capacity == 2 and len(replaced.instances) == 2
    assert second not in {i.id for i in replaced.instances}
