"""An example `cluster/` tree that really applies on moto and the Kubernetes emulator: a main
stack, one `cf-manifests` stack, a node-pool profile with a launch template and an Auto Scaling
group, defaults, two manifest components and a deletions list.

`cluster_tree(version)` gives the files of one config version. Version 2 changes what a promotion
typically changes: the worker image (so every node is outdated and rolled), a setting in a
manifest, and a `post_apply` deletion of a ConfigMap that version 1 created.
"""

from __future__ import annotations

MAIN_STACK = """\
AWSTemplateFormatVersion: "2010-09-09"
Description: "main stack of {{ cluster.id }}"
Resources:
  WorkerSecurityGroup:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: "workers of {{ cluster.local_id }}"
Outputs:
  WorkerSecurityGroup:
    Value: !Ref WorkerSecurityGroup
"""

LOGS_STACK = """\
AWSTemplateFormatVersion: "2010-09-09"
Description: "audit logs of {{ cluster.local_id }}"
Resources:
  AuditLogBucket:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: "audit-{{ cluster.local_id }}"
Outputs:
  AuditLogBucket:
    Value: !Ref AuditLogBucket
"""

# DesiredCapacity is left to the rolling update (it surges); a new group starts at MinSize.
NODE_POOL_STACK = """\
AWSTemplateFormatVersion: "2010-09-09"
Description: "node pool {{ node_pool.name }} of {{ cluster.local_id }}"
Resources:
  LaunchTemplate:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData:
        ImageId: "{{ node_pool.config_items.worker_image }}"
        InstanceType: "{{ node_pool.instance_types[0] }}"
  AutoScalingGroup:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      AvailabilityZones: {{ values.availability_zones | to_json }}
      MinSize: "{{ node_pool.min_size }}"
      MaxSize: "{{ node_pool.max_size }}"
      LaunchTemplate:
        LaunchTemplateId: !Ref LaunchTemplate
        Version: $Latest
      Tags:
        - Key: kubernetes.io/cluster/{{ cluster.id }}
          Value: owned
          PropagateAtLaunch: true
        - Key: node-pool
          Value: "{{ node_pool.name }}"
          PropagateAtLaunch: true
Outputs:
  AutoScalingGroupName:
    Value: !Ref AutoScalingGroup
"""

DEFAULTS = """\
worker_image: ami-{{ "0a0a0a01" }}
log_level: info
{% if cluster.environment == "production" %}
replicas: "3"
{% else %}
replicas: "1"
{% endif %}
"""

NAMESPACES = """\
apiVersion: v1
kind: Namespace
metadata:
  name: platform
"""

SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: platform-settings
  namespace: platform
data:
  cluster: "{{ cluster.alias }}"
  log_level: "{{ cluster.config_items.log_level }}"
  audit_bucket: "{{ values.stack_outputs.AuditLogBucket }}"
"""

LEGACY = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: legacy-settings
  namespace: platform
data:
  mode: legacy
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: echo
  namespace: platform
  labels: {application: echo}
spec:
  replicas: {{ cluster.config_items.replicas | int }}
  selector:
    matchLabels: {application: echo}
  template:
    metadata:
      labels: {application: echo}
    spec:
      containers:
        - name: echo
          image: "registry.example.org/echo:{{ version }}"
"""

DELETIONS = """\
pre_apply: []
post_apply:
  - kind: ConfigMap
    namespace: platform
    name: legacy-settings
"""


def cluster_tree(version: int = 1) -> dict[str, str]:
    """The files of `cluster/` at config version 1 or 2."""
    files = {
        "cluster/config-defaults.yaml": DEFAULTS.replace("0a0a0a01", f"0a0a0a0{version}"),
        "cluster/stack.yaml": MAIN_STACK,
        "cluster/cf-manifests/logs.yaml": LOGS_STACK,
        "cluster/node-pools/worker-default/stack.yaml": NODE_POOL_STACK,
        "cluster/manifests/00-namespaces/namespaces.yaml": NAMESPACES,
        "cluster/manifests/platform/settings.yaml": SETTINGS.replace(
            'log_level: "{{ cluster.config_items.log_level }}"',
            'log_level: "{{ cluster.config_items.log_level }}"' + (
                "\n  tracing: enabled" if version >= 2 else "")),
        "cluster/manifests/platform/echo.yaml": DEPLOYMENT.replace("{{ version }}",
                                                                   f"1.{version}"),
    }
    if version >= 2:
        files["cluster/manifests/deletions.yaml"] = DELETIONS
    else:
        files["cluster/manifests/platform/legacy.yaml"] = LEGACY
    return files
