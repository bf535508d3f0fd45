"""Looking at moto through boto3: every listing read to its last page.

moto pages as AWS does (DescribeStacks and DescribeAutoScalingGroups at 50, DescribeInstances at
100 reservations), and one moto serves the whole test session: a listing that reads only its
first page misses what later tests made, so an `assert not exists` could not fail.
"""

from __future__ import annotations

from typing import Any

from clmgit.engine.clock import Backoff

#: The AWS adapters' waits in fake seconds (the tests run them on a `FakeClock`).
FAST = Backoff(initial=1, factor=2, maximum=8, timeout=60)


def paged(client: Any, operation: str, key: str, **params: Any) -> list[dict[str, Any]]:
    """Every item under `key` of every page of `operation`."""
    pages = client.get_paginator(operation).paginate(**params)
    return [item for page in pages for item in page.get(key, [])]


def all_stacks(cloudformation: Any) -> list[dict[str, Any]]:
    """Every stack DescribeStacks lists (deleted ones are not listed)."""
    return paged(cloudformation, "describe_stacks", "Stacks")


def all_stack_summaries(cloudformation: Any) -> list[dict[str, Any]]:
    """Every stack ListStacks lists, deleted ones included (with their status)."""
    return paged(cloudformation, "list_stacks", "StackSummaries")


def all_groups(autoscaling: Any) -> list[dict[str, Any]]:
    """Every Auto Scaling group."""
    return paged(autoscaling, "describe_auto_scaling_groups", "AutoScalingGroups")


def all_instances(ec2: Any, **params: Any) -> list[dict[str, Any]]:
    """Every instance of every reservation DescribeInstances finds (`Filters=` and so on)."""
    reservations = paged(ec2, "describe_instances", "Reservations", **params)
    return [instance for r in reservations for instance in r["Instances"]]


def all_objects(s3: Any, bucket: str, prefix: str = "") -> list[dict[str, Any]]:
    """Every object of `bucket` under `prefix`."""
    return paged(s3, "list_objects_v2", "Contents", Bucket=bucket, Prefix=prefix)
