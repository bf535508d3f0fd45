"""CLM's layout on CloudFormation (moto in server mode): stacks CLM created — its names, its
tags, termination protection — are updated, not duplicated; the etcd stack's update runs under
CLM's stack policy for that update only; a node pool's groups are found under CLM's stack name;
a removed pool's protected stack is deleted; a pool whose user data CLM gzipped with Go is taken
over without a change."""

from __future__ import annotations

import base64
import json
from typing import Any

from clmgit.adapters.aws.autoscaling import AutoScalingPools
from clmgit.adapters.aws.cloudformation import CloudFormationStacks
from clmgit.config.computed import user_data
from clmgit.engine.clmstacks import ETCD_STACK_POLICY, main_tags, node_pool_tags
from clmgit.engine.stacks import (
    apply_stacks,
    etcd_stack,
    main_stack,
    node_pool_stack,
)
from clmgit.layout import CLM_LAYOUT
from clmgit.model import Cluster
from clmgit.stacknames import node_pool_stack_name
from tests.helpers import cfn_templates as t
from tests.helpers.aws import all_stacks
from tests.helpers.gojudge import go_gzip

LATEST = "!GetAtt LaunchTemplate.LatestVersionNumber"
ETCD = """\
Resources:
  EtcdQueue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: {timeout}
"""


def create_as_clm(aws: Any, name: str, body: str, tags: dict[str, str]) -> None:
    """A stack as CLM's CreateStack leaves it: protected, CLM's tags, no clmgit tag."""
    cf = aws("cloudformation")
    cf.create_stack(StackName=name, TemplateBody=body, EnableTerminationProtection=True,
                    Capabilities=["CAPABILITY_NAMED_IAM"],
                    Tags=[{"Key": k, "Value": v} for k, v in tags.items()])
    cf.get_waiter("stack_create_complete").wait(StackName=name,
                                                WaiterConfig={"Delay": 1, "MaxAttempts": 30})


def cluster_stacks(aws: Any, cluster: Cluster) -> list[str]:
    """Every live stack whose name or tags belong to the cluster (any layout's)."""
    found = []
    for stack in all_stacks(aws("cloudformation")):
        tags = t.tags_of(stack)
        if stack["StackStatus"] != "DELETE_COMPLETE" and (
            cluster.local_id in stack["StackName"] or cluster.id in str(tags)
            or cluster.id.replace(":", "-") in stack["StackName"]
        ):
            found.append(stack["StackName"])
    return sorted(found)


def clm_stacks(cluster: Cluster, *, etcd_timeout: int = 30, pools: tuple[str, ...] = ("default",),
               instance_type: str = "t3.micro") -> dict[str, Any]:
    return dict(
        cluster=cluster, layout=CLM_LAYOUT,
        etcd=etcd_stack(f"etcd-{cluster.local_id}", ETCD.format(timeout=etcd_timeout)),
        main=main_stack(cluster, t.MAIN),
        node_pools=[node_pool_stack(cluster, p, t.node_pool(instance_type=instance_type),
                                    profile="worker-default", layout=CLM_LAYOUT) for p in pools],
    )


def test_stacks_clm_created_are_updated_not_duplicated(
    stacks: CloudFormationStacks, pools: AutoScalingPools, cluster: Cluster, aws: Any,
    session: Any, calls: Any,
) -> None:
    pool_stack = node_pool_stack_name(cluster, "default", CLM_LAYOUT)
    assert pool_stack == f"nodepool-default-{cluster.id.replace(':', '-')}"
    create_as_clm(aws, cluster.local_id, t.MAIN, main_tags(cluster))
    create_as_clm(aws, f"etcd-{cluster.local_id}", ETCD.format(timeout=30),
                  {"application": "kubernetes", "component": "etcd-cluster"})
    create_as_clm(aws, pool_stack, t.node_pool(),
                  node_pool_tags(cluster, "default", "worker-default"))
    before = cluster_stacks(aws, cluster)

    results = apply_stacks(stacks, **clm_stacks(cluster, etcd_timeout=60,
                                                 instance_type="t3.small"))

    assert [(r.name, r.operation) for r in results] == [
        (f"etcd-{cluster.local_id}", "update"), (cluster.local_id, "none"),
        (pool_stack, "update")]
    assert cluster_stacks(aws, cluster) == before
    cf = aws("cloudformation")
    assert t.tags_of(cf.describe_stacks(StackName=pool_stack)["Stacks"][0]) == node_pool_tags(
        cluster, "default", "worker-default")
    # CLM's stack policy held for the etcd stack's update only: the stack keeps none.
    [update] = calls.params("UpdateStack")
    assert update["StackName"] == f"etcd-{cluster.local_id}"
    assert json.loads(update["StackPolicyDuringUpdateBody"]) == json.loads(ETCD_STACK_POLICY)
    assert "StackPolicyBody" not in update and "SetStackPolicy" not in calls.names()
    assert not cf.get_stack_policy(StackName=f"etcd-{cluster.local_id}").get("StackPolicyBody")
    assert "VisibilityTimeout: 60" in cf.get_template(
        StackName=f"etcd-{cluster.local_id}")["TemplateBody"]
    # The rolling update finds the pool's group under CLM's stack name.
    clm_pools = AutoScalingPools(session, clock=pools._clock, backoff=pools._backoff,
                                 layout=CLM_LAYOUT)
    state = clm_pools.pool_state(cluster, "default")
    assert len(state.asgs) == 1 and state.asgs[0].instance_types == ("t3.small",)


def test_a_removed_pools_protected_stack_is_deleted(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    apply_stacks(stacks, **clm_stacks(cluster, pools=("a", "b")))
    gone = node_pool_stack_name(cluster, "b", CLM_LAYOUT)
    assert aws("cloudformation").describe_stacks(StackName=gone)["Stacks"][0][
        "EnableTerminationProtection"]
    removed: list[str] = []

    results = apply_stacks(stacks, on_pool_removed=removed.append,
                           **clm_stacks(cluster, pools=("a",)))

    assert (gone, "delete") in [(r.name, r.operation) for r in results]
    assert removed == ["b"]
    assert gone not in cluster_stacks(aws, cluster)


USER_DATA = "#cloud-config\nwrite_files:\n  - path: /etc/kubernetes/pool\n    content: default\n"


def go_user_data(text: str) -> str:
    """`Values.UserData` as CLM writes it: Go's gzip, base64."""
    return base64.b64encode(go_gzip(text.encode())).decode()


def test_a_pool_clm_made_with_gos_user_data_is_taken_over_without_a_change(
    stacks: CloudFormationStacks, pools: AutoScalingPools, cluster: Cluster, aws: Any,
    session: Any,
) -> None:
    pool_stack = node_pool_stack_name(cluster, "default", CLM_LAYOUT)
    create_as_clm(aws, cluster.local_id, t.MAIN, main_tags(cluster))
    create_as_clm(aws, pool_stack, t.node_pool(user_data=go_user_data(USER_DATA), version=LATEST),
                  node_pool_tags(cluster, "default", "worker-default"))
    deployed = aws("cloudformation").get_template(StackName=pool_stack)["TemplateBody"]

    def apply(text: str, *, dry_run: bool = False) -> list[tuple[str, str]]:
        rendered = t.node_pool(user_data=user_data(text), version=LATEST)  # clmgit's gzip
        results = apply_stacks(
            stacks, cluster=cluster, layout=CLM_LAYOUT, main=main_stack(cluster, t.MAIN),
            node_pools=[node_pool_stack(cluster, "default", rendered, profile="worker-default",
                                        layout=CLM_LAYOUT)], dry_run=dry_run)
        return [(r.name, r.operation) for r in results]

    assert apply(USER_DATA, dry_run=True) == [(cluster.local_id, "none"), (pool_stack, "none")]
    assert apply(USER_DATA) == [(cluster.local_id, "none"), (pool_stack, "none")]
    assert aws("cloudformation").get_template(StackName=pool_stack)["TemplateBody"] == deployed
    clm_pools = AutoScalingPools(session, clock=pools._clock, backoff=pools._backoff,
                                 layout=CLM_LAYOUT)
    state = clm_pools.pool_state(cluster, "default")
    assert state.asgs[0].launch_template_version == "1" and not state.outdated

    # New content is a change: the launch template gets a version, the nodes are outdated.
    assert apply(USER_DATA + "# new\n") == [(cluster.local_id, "none"), (pool_stack, "update")]
    after = clm_pools.pool_state(cluster, "default")
    assert after.asgs[0].launch_template_version == "2"
    assert {i.id for i in after.outdated} == {i.id for i in state.instances}
