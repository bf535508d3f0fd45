"""moto in this process counts the requests that may change something, which the node simulator
reads to skip asking for instances while nothing changed."""

from __future__ import annotations

import boto3
from clmgit_sandbox.aws import REGION, moto_changes


def test_changes_are_counted_and_reads_are_not(moto_endpoint: str) -> None:
    changes = moto_changes()
    assert changes is not None  # boto3 is pointed at the moto of this process
    asg = boto3.Session(region_name=REGION).client("autoscaling")
    before = changes()
    asg.describe_auto_scaling_groups()
    asg.describe_auto_scaling_instances()
    assert changes() == before
    ec2 = boto3.Session(region_name=REGION).client("ec2")
    ec2.create_launch_template(LaunchTemplateName="counted",
                               LaunchTemplateData={"InstanceType": "t3.micro"})
    assert changes() == before + 1
