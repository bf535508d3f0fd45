"""The CloudFormation adapter and the stack order against moto in server mode, over HTTP."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
from clmgit_sandbox.doubles import FakeClock

from clmgit.adapters.aws.cloudformation import CloudFormationStacks
from clmgit.config.deletions import Deletion
from clmgit.engine.clock import Backoff, TimedOut
from clmgit.engine.stacks import (
    TAG_CLUSTER,
    TAG_NODE_POOL,
    TAG_ROLE,
    RenderedStack,
    ResourceChange,
    StackResult,
    apply_stacks,
    decommission_stacks,
    deletion_stack_names,
    main_stack,
    node_pool_stack,
    node_pool_stack_name,
)
from clmgit.errors import ApplyError, ConfigError
from clmgit.model import Cluster
from tests.helpers import cfn_templates as t
from tests.helpers.aws import all_instances, all_objects, all_stacks

CHANGING_CALLS = {"ExecuteChangeSet", "UpdateStack", "CreateStack", "DeleteStack",
                  "UpdateTerminationProtection"}


def apply(stacks: CloudFormationStacks, cluster: Cluster, *pools: RenderedStack,
          **kwargs: Any) -> list[StackResult]:
    return apply_stacks(stacks, cluster=cluster, main=main_stack(cluster, t.MAIN),
                        node_pools=pools, **kwargs)


def pool(cluster: Cluster, name: str = "default", **kwargs: Any) -> RenderedStack:
    return node_pool_stack(cluster, name, lambda outputs: t.node_pool_from(outputs, **kwargs))


def describe(aws: Any, name: str) -> dict[str, Any]:
    return dict(aws("cloudformation").describe_stacks(StackName=name)["Stacks"][0])


def status(aws: Any, name: str) -> str:
    return str(describe(aws, name)["StackStatus"])


def stack_exists(aws: Any, name: str) -> bool:
    return any(s["StackName"] == name and s["StackStatus"] != "DELETE_COMPLETE"
               for s in all_stacks(aws("cloudformation")))


def running_instances(aws: Any, cluster: Cluster) -> list[dict[str, Any]]:
    return all_instances(aws("ec2"), Filters=[
        {"Name": "tag:aws:autoscaling:groupName",
         "Values": [_group_name(aws, node_pool_stack_name(cluster, "default"))]},
        {"Name": "instance-state-name", "Values": ["running"]},
    ])


def _group_name(aws: Any, stack: str) -> str:
    return str(describe(aws, stack)["Outputs"][0]["OutputValue"])


def test_a_node_pool_stack_runs_instances_and_a_second_run_changes_nothing(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any, calls: Any
) -> None:
    first = apply(stacks, cluster, pool(cluster, desired=3))

    assert [(r.name, r.operation) for r in first] == [
        (cluster.local_id, "create"), (node_pool_stack_name(cluster, "default"), "create")]
    assert len(running_instances(aws, cluster)) == 3

    calls.made.clear()
    second = apply(stacks, cluster, pool(cluster, desired=3))

    assert [r.operation for r in second] == ["none", "none"]
    assert CHANGING_CALLS.isdisjoint(calls.names())
    assert len(running_instances(aws, cluster)) == 3


def test_outputs_of_earlier_stacks_reach_later_templates(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    results = apply(stacks, cluster, pool(cluster))

    group_id = describe(aws, cluster.local_id)["Outputs"][0]["OutputValue"]
    assert group_id.startswith("sg-")
    assert results[0].outputs == {"WorkerSecurityGroup": group_id}
    group = aws("autoscaling").describe_auto_scaling_groups(
        AutoScalingGroupNames=[results[1].outputs["AutoScalingGroupName"]])["AutoScalingGroups"][0]
    assert t.tags_of(group)["security-group"] == group_id


def test_every_stack_is_tagged_and_only_the_main_stack_is_protected(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    apply_stacks(stacks, cluster=cluster, main=main_stack(cluster, t.MAIN),
                 extra=[RenderedStack(f"extra-{cluster.local_id}", t.MAIN)],
                 node_pools=[pool(cluster)])

    main = describe(aws, cluster.local_id)
    extra = describe(aws, f"extra-{cluster.local_id}")
    node_pool = describe(aws, node_pool_stack_name(cluster, "default"))
    assert t.tags_of(main) == {TAG_CLUSTER: cluster.id, TAG_ROLE: "main"}
    assert t.tags_of(extra) == {TAG_CLUSTER: cluster.id, TAG_ROLE: "cf-manifest"}
    assert t.tags_of(node_pool) == {TAG_CLUSTER: cluster.id, TAG_ROLE: "node-pool",
                                    TAG_NODE_POOL: "default"}
    assert [main["EnableTerminationProtection"], extra["EnableTerminationProtection"],
            node_pool["EnableTerminationProtection"]] == [True, False, False]


def test_a_changed_template_updates_the_stack_through_a_change_set(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any, calls: Any
) -> None:
    apply(stacks, cluster, pool(cluster))
    calls.made.clear()

    results = apply(stacks, cluster, pool(cluster, instance_type="t3.small"))

    assert [r.operation for r in results] == ["none", "update"]
    assert results[1].changes == (
        ResourceChange("Modify", "LaunchTemplate", "AWS::EC2::LaunchTemplate"),)
    assert calls.names().count("ExecuteChangeSet") == 1
    assert status(aws, node_pool_stack_name(cluster, "default")) == "UPDATE_COMPLETE"


@pytest.mark.parametrize(("template", "reason"), [
    (t.BAD_RESOURCE_TYPE, "Unrecognized resource types: [AWS::Nope::Thing]"),
    (t.MISSING_PROPERTY, "AutoScalingGroup (AWS::AutoScaling::AutoScalingGroup) CREATE_FAILED: "
                         "Valid requests must contain either LaunchTemplate"),
])
def test_a_broken_template_fails_with_the_stacks_reason(
    stacks: CloudFormationStacks, cluster: Cluster, template: str, reason: str
) -> None:
    with pytest.raises(ApplyError, match=re.escape(reason)):
        apply(stacks, cluster, node_pool_stack(cluster, "default", template))


def test_a_resource_type_aws_knows_is_accepted_where_moto_does_not_model_it(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    results = apply(stacks, cluster, node_pool_stack(cluster, "default",
                                                     t.UNMODELLED_RESOURCE_TYPE))

    assert results[1].operation == "create"
    assert status(aws, node_pool_stack_name(cluster, "default")) == "CREATE_COMPLETE"


def test_exports_imports_get_att_lists_and_network_balancers_as_on_aws(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    subnet = aws("ec2").describe_subnets()["Subnets"][0]
    certificate = aws("acm").request_certificate(DomainName="api.example.org")["CertificateArn"]
    main = t.EXPORTING_MAIN % {"subnet": subnet["SubnetId"], "vpc": subnet["VpcId"],
                               "certificate": certificate}
    parameter = f"/{cluster.local_id}/queue"
    imports = t.IMPORTING_POOL % {"name": parameter, "stack": cluster.local_id}

    results = apply_stacks(stacks, cluster=cluster, main=main_stack(cluster, main),
                           node_pools=[node_pool_stack(cluster, "default", imports)])

    queue_arn = results[0].outputs["QueueArn"]
    assert queue_arn.startswith("arn:aws:sqs:")
    assert aws("ssm").get_parameter(Name=parameter)["Parameter"]["Value"] == queue_arn
    [balancer] = [b for b in aws("elbv2").describe_load_balancers()["LoadBalancers"]
                  if b["VpcId"] == subnet["VpcId"] and b["Scheme"] == "internal"
                  and cluster.local_id in b["LoadBalancerName"]]
    assert balancer["Type"] == "network"


def test_a_stack_whose_creation_failed_is_recreated_by_the_next_run(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    with pytest.raises(ApplyError):
        apply(stacks, cluster, node_pool_stack(cluster, "default", t.MISSING_PROPERTY))
    name = node_pool_stack_name(cluster, "default")
    assert status(aws, name) == "ROLLBACK_COMPLETE"

    results = apply(stacks, cluster, pool(cluster))

    assert results[1].operation == "create"
    assert status(aws, name) == "CREATE_COMPLETE"


def test_a_failed_update_reports_the_first_failed_resource(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    apply(stacks, cluster, pool(cluster))
    broken = t.node_pool().replace("LaunchTemplateId: !Ref LaunchTemplate",
                                   "LaunchTemplateId: lt-0123456789abcdef0")

    with pytest.raises(ApplyError, match=r"AutoScalingGroup .* UPDATE_FAILED"):
        apply(stacks, cluster, node_pool_stack(cluster, "default", broken))
    assert status(aws, node_pool_stack_name(cluster, "default")) == "UPDATE_ROLLBACK_COMPLETE"


def test_dry_run_shows_each_change_set_and_changes_nothing(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any, calls: Any
) -> None:
    new = apply(stacks, cluster, pool(cluster), dry_run=True)

    assert [(r.operation, r.dry_run) for r in new] == [("create", True), ("create", True)]
    assert new[1].changes == (
        ResourceChange("Add", "LaunchTemplate", "AWS::EC2::LaunchTemplate"),
        ResourceChange("Add", "AutoScalingGroup", "AWS::AutoScaling::AutoScalingGroup"),
    )
    assert not stack_exists(aws, cluster.local_id)
    assert "ExecuteChangeSet" not in calls.names()

    apply(stacks, cluster, pool(cluster))
    calls.made.clear()
    changed = apply(stacks, cluster, pool(cluster, instance_type="t3.large"), dry_run=True)

    assert [r.operation for r in changed] == ["none", "update"]
    assert [c.action for c in changed[1].changes] == ["Modify"]
    assert CHANGING_CALLS.isdisjoint(calls.names())
    # By id: the session's moto holds every test's templates, more than one page of them.
    [mine] = aws("ec2").describe_launch_templates(
        LaunchTemplateIds=[_template_id(aws, cluster)])["LaunchTemplates"]
    assert mine["LatestVersionNumber"] == 1


def _template_id(aws: Any, cluster: Cluster) -> str:
    resources = aws("cloudformation").describe_stack_resources(
        StackName=node_pool_stack_name(cluster, "default"))["StackResources"]
    return next(r["PhysicalResourceId"] for r in resources
                if r["LogicalResourceId"] == "LaunchTemplate")


def test_a_template_over_the_inline_limit_goes_by_s3_url(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any, calls: Any
) -> None:
    big = t.node_pool(padding=60_000)

    apply(stacks, cluster, node_pool_stack(cluster, "default", big))

    created = calls.params("CreateChangeSet")
    assert "TemplateBody" in created[0] and "TemplateURL" not in created[0]
    url = created[1]["TemplateURL"]
    bucket, key = url.removeprefix("https://").split(".", 1)[0], url.split("/", 3)[3]
    assert aws("s3").get_object(Bucket=bucket, Key=key)["Body"].read().decode() == big
    assert status(aws, node_pool_stack_name(cluster, "default")) == "CREATE_COMPLETE"


def test_a_dry_run_of_a_template_over_the_inline_limit_writes_nothing_to_s3(
    session: Any, clock: FakeClock, cluster: Cluster, aws: Any, calls: Any
) -> None:
    bucket = f"templates-{cluster.local_id}"
    stacks = CloudFormationStacks(session, clock=clock, template_bucket=bucket,
                                  backoff=Backoff(initial=1, factor=2, maximum=8, timeout=60))
    big = t.node_pool(padding=60_000)

    new = apply(stacks, cluster, node_pool_stack(cluster, "default", big), dry_run=True)
    assert [(r.operation, len(r.changes)) for r in new] == [("create", 1), ("create", 2)]

    apply(stacks, cluster, node_pool_stack(cluster, "default", big))
    aws("s3").delete_object(Bucket=bucket, Key=all_objects(aws("s3"), bucket)[0]["Key"])
    aws("s3").delete_bucket(Bucket=bucket)
    calls.made.clear()
    same = apply(stacks, cluster, node_pool_stack(cluster, "default", big), dry_run=True)
    changed = apply(stacks, cluster, node_pool_stack(
        cluster, "default", t.node_pool(padding=60_000, instance_type="t3.large")), dry_run=True)

    assert [r.operation for r in same] == ["none", "none"]
    assert [(r.operation, [(c.action, c.logical_id) for c in r.changes]) for r in changed] == [
        ("none", []), ("update", [("Modify", "LaunchTemplate")])]
    assert {"CreateBucket", "PutObject", *CHANGING_CALLS}.isdisjoint(calls.names())
    assert bucket not in [b["Name"] for b in aws("s3").list_buckets()["Buckets"]]


def _moto_stack(name: str) -> Any:
    from moto.cloudformation.models import cloudformation_backends

    backend = cloudformation_backends["123456789012"]["eu-central-1"]
    return next(s for s in backend.stacks.values() if s.name == name)


def test_an_update_waits_for_a_running_operation_then_proceeds(
    stacks: CloudFormationStacks, cluster: Cluster, clock: FakeClock
) -> None:
    apply(stacks, cluster)
    stack = _moto_stack(cluster.local_id)
    stack.status = "UPDATE_IN_PROGRESS"  # someone else's update, still running

    def finish_after_three_polls(c: FakeClock) -> None:
        if len(c.sleeps) == 3:
            stack.status = "UPDATE_COMPLETE"

    clock.on_sleep = finish_after_three_polls
    results = apply_stacks(stacks, cluster=cluster, main=main_stack(cluster, t.MAIN + "# v2\n"))

    assert clock.sleeps == [1, 2, 4]
    assert results[0].operation == "none"  # a comment changes no resource


def test_waiting_for_a_stuck_operation_gives_up_at_the_time_limit(
    stacks: CloudFormationStacks, cluster: Cluster, clock: FakeClock
) -> None:
    apply(stacks, cluster)
    _moto_stack(cluster.local_id).status = "UPDATE_IN_PROGRESS"

    with pytest.raises(TimedOut, match="60s"):
        apply(stacks, cluster)
    assert sum(clock.sleeps) == 60


def test_removed_node_pools_and_listed_deletions_are_deleted(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    old = f"old-{cluster.local_id}"
    aws("cloudformation").create_stack(StackName=old, TemplateBody=t.MAIN)
    apply(stacks, cluster, pool(cluster, "a"), pool(cluster, "b", desired=1))
    drained: list[str] = []

    results = apply(stacks, cluster, pool(cluster, "a"), on_pool_removed=drained.append,
                    deletions_pre=[f"gone-{cluster.local_id}"], deletions_post=[old])

    assert drained == ["b"]
    assert [(r.name, r.operation) for r in results] == [
        (f"gone-{cluster.local_id}", "none"),
        (cluster.local_id, "none"),
        (node_pool_stack_name(cluster, "a"), "none"),
        (node_pool_stack_name(cluster, "b"), "delete"),
        (old, "delete"),
    ]
    assert not stack_exists(aws, node_pool_stack_name(cluster, "b"))
    assert not stack_exists(aws, old)


def test_a_protected_stack_named_for_deletion_is_refused(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    apply(stacks, cluster)

    with pytest.raises(ApplyError, match="termination protection"):
        apply(stacks, cluster, deletions_post=[cluster.local_id])
    assert stack_exists(aws, cluster.local_id)


def test_decommission_deletes_every_stack_main_last_and_can_run_again(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any, calls: Any
) -> None:
    apply_stacks(stacks, cluster=cluster, main=main_stack(cluster, t.MAIN),
                 extra=[RenderedStack(f"extra-{cluster.local_id}", t.MAIN)],
                 node_pools=[pool(cluster)])
    calls.made.clear()

    results = decommission_stacks(stacks, cluster=cluster)

    assert [(r.name, r.operation) for r in results] == [
        (node_pool_stack_name(cluster, "default"), "delete"),
        (f"extra-{cluster.local_id}", "delete"),
        (cluster.local_id, "delete"),
    ]
    assert [p["EnableTerminationProtection"] for p in calls.params("UpdateTerminationProtection")] \
        == [False]
    assert not stack_exists(aws, cluster.local_id)
    again = decommission_stacks(stacks, cluster=cluster)
    assert [r.operation for r in again] == ["none"]


def test_a_labels_deletion_deletes_only_the_clusters_own_stacks(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    # Two clusters in one account and region, each with a cf-manifests stack of the same role.
    other = replace(cluster, id=cluster.id + "-other", local_id=cluster.local_id + "-other")
    for c in (cluster, other):
        apply_stacks(stacks, cluster=c, main=main_stack(c, t.MAIN),
                     extra=[RenderedStack(f"logs-{c.local_id}", t.MAIN)])
    entry = Deletion("Stack", labels={TAG_ROLE: "cf-manifest"}, where="cf-deletions.yaml: e")

    names = deletion_stack_names(stacks, [entry], cluster=cluster)
    apply(stacks, cluster, deletions_post=names)

    assert names == [f"logs-{cluster.local_id}"]
    assert not stack_exists(aws, f"logs-{cluster.local_id}")
    assert stack_exists(aws, f"logs-{other.local_id}")


def test_a_name_deletion_of_another_clusters_stack_is_refused(
    stacks: CloudFormationStacks, cluster: Cluster, aws: Any
) -> None:
    other = replace(cluster, id=cluster.id + "-other", local_id=cluster.local_id + "-other")
    apply_stacks(stacks, cluster=other, main=main_stack(other, t.MAIN),
                 extra=[RenderedStack(f"logs-{other.local_id}", t.MAIN)])
    entry = Deletion("Stack", name=f"logs-{other.local_id}",
                     where="cluster/cf-deletions.yaml: post_apply[0]")

    with pytest.raises(ConfigError, match=r"^cluster/cf-deletions.yaml: post_apply\[0\]: stack "
                       f"logs-{other.local_id} is one of another cluster"):
        deletion_stack_names(stacks, [entry], cluster=cluster)
    assert stack_exists(aws, f"logs-{other.local_id}")
