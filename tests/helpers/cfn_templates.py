"""CloudFormation templates for the moto tests: a main stack and a node pool of one Auto Scaling
group on a launch template.

The group uses launch template version `$Latest` unless told `version=` (kubernetes-on-aws
writes `!GetAtt LaunchTemplate.LatestVersionNumber`, which the sandbox's moto follows as AWS
does: `sandbox/clmgit_sandbox/moto_shims.py`, 10).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clmgit.engine.stacks import Outputs

MAIN = """\
AWSTemplateFormatVersion: "2010-09-09"
Description: main stack of a test cluster
Resources:
  WorkerSecurityGroup:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: workers
Outputs:
  WorkerSecurityGroup:
    Value: !Ref WorkerSecurityGroup
"""


def node_pool(
    *, instance_type: str = "t3.micro", image: str = "ami-12c6146b", desired: int = 2,
    max_size: int = 4, security_group: str = "none", padding: int = 0, version: str = "$Latest",
    user_data: str = "",
) -> str:
    """A node-pool template; `padding` adds that many bytes of metadata (for size limits)."""
    metadata = f"Metadata:\n  Padding: {'x' * padding}\n" if padding else ""
    user_data = f"\n        UserData: {user_data}" if user_data else ""
    return f"""\
AWSTemplateFormatVersion: "2010-09-09"
{metadata}Resources:
  LaunchTemplate:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData:
        ImageId: {image}
        InstanceType: {instance_type}{user_data}
  AutoScalingGroup:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      AvailabilityZones: [eu-central-1a, eu-central-1b]
      MinSize: "0"
      MaxSize: "{max_size}"
      DesiredCapacity: "{desired}"
      LaunchTemplate:
        LaunchTemplateId: !Ref LaunchTemplate
        Version: {version}
      Tags:
        - Key: security-group
          Value: {security_group}
          PropagateAtLaunch: true
Outputs:
  AutoScalingGroupName:
    Value: !Ref AutoScalingGroup
"""


def node_pool_from(outputs: Outputs, **kwargs: Any) -> str:
    """A node-pool template that uses the main stack's output, as a Jinja template would (a dry
    run of a new cluster has no outputs yet)."""
    return node_pool(security_group=outputs.get("WorkerSecurityGroup", "unknown"), **kwargs)


BAD_RESOURCE_TYPE = """\
Resources:
  Thing:
    Type: AWS::Nope::Thing
    Properties: {}
"""

#: A type AWS knows and moto does not model (moto makes nothing of it, as it says).
UNMODELLED_RESOURCE_TYPE = """\
Resources:
  Queue:
    Type: AWS::SQS::Queue
  Hook:
    Type: AWS::AutoScaling::LifecycleHook
    Properties:
      AutoScalingGroupName: group
      LifecycleTransition: autoscaling:EC2_INSTANCE_TERMINATING
"""

MISSING_PROPERTY = """\
Resources:
  AutoScalingGroup:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      AvailabilityZones: [eu-central-1a]
      MinSize: "1"
      MaxSize: "1"
"""


def tags_of(raw: Mapping[str, Any]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in raw.get("Tags", ())}


#: A main stack as kubernetes-on-aws writes one: a network load balancer with a TLS listener,
#: `!GetAtt` in its sequence form, and an export a later stack imports.
EXPORTING_MAIN = """\
Resources:
  Queue:
    Type: AWS::SQS::Queue
  Balancer:
    Type: AWS::ElasticLoadBalancingV2::LoadBalancer
    Properties:
      Type: network
      Scheme: internal
      Subnets: [%(subnet)s]
  Targets:
    Type: AWS::ElasticLoadBalancingV2::TargetGroup
    Properties: {Port: 443, Protocol: TCP, VpcId: %(vpc)s}
  Listener:
    Type: AWS::ElasticLoadBalancingV2::Listener
    Properties:
      LoadBalancerArn: !Ref Balancer
      Port: 443
      Protocol: TLS
      Certificates: [{CertificateArn: "%(certificate)s"}]
      DefaultActions: [{Type: forward, TargetGroupArn: !Ref Targets}]
Outputs:
  QueueArn:
    Value: !GetAtt
      - Queue
      - Arn
    Export:
      Name: !Sub "${AWS::StackName}:queue-arn"
"""

#: A node-pool stack reading the main stack's export.
IMPORTING_POOL = """\
Resources:
  Parameter:
    Type: AWS::SSM::Parameter
    Properties:
      Name: %(name)s
      Type: String
      Value: !ImportValue "%(stack)s:queue-arn"
"""
