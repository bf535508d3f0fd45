"""How CLM tags, protects and finds a cluster's stacks (layout `clm`, `clmgit.layout`).

CLM puts no tags of clmgit's on its stacks; a stack's tags are the template's `Metadata.Tags`
with CLM's own on top:

- main (`<local_id>`): `kubernetes.io/cluster/<id>: owned`,
  `cluster-lifecycle-controller.zalando.org/main-stack: "true"`;
- etcd: `application: kubernetes`, `component: etcd-cluster`;
- `cf-manifests/*`: `kubernetes.io/cluster/<name>: owned`;
- node pool: `kubernetes.io/cluster/<name>: owned`, `kubernetes.io/role/node-pool: "true"`,
  `kubernetes.io/node-pool: <pool>`, `NodePool: <pool>`, `kubernetes.io/node-pool/profile:
  <profile>`.

`<name>` is the cluster's alias on EKS, its id elsewhere (`stacknames.clm_cluster_name`). Every
stack gets termination protection; the etcd stack's updates may not replace or delete its Auto
Scaling groups, S3 buckets and IAM roles (CLM's stack policy).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from clmgit.config import yamlfiles
from clmgit.errors import ConfigError
from clmgit.model import Cluster
from clmgit.stacknames import clm_cluster_name

CLUSTER_TAG_PREFIX = "kubernetes.io/cluster/"
OWNED = "owned"
MAIN_STACK_TAG = "cluster-lifecycle-controller.zalando.org/main-stack"
NODE_POOL_ROLE_TAG = "kubernetes.io/role/node-pool"
NODE_POOL_TAG = "kubernetes.io/node-pool"
NODE_POOL_TAG_LEGACY = "NodePool"
NODE_POOL_PROFILE_TAG = "kubernetes.io/node-pool/profile"
ETCD_TAGS = {"application": "kubernetes", "component": "etcd-cluster"}

ETCD_STACK_POLICY = json.dumps({"Statement": [
    {"Effect": "Allow", "Action": ["Update:*"], "Principal": "*", "Resource": ["*"]},
    {"Effect": "Deny", "Action": ["Update:Replace", "Update:Delete"], "Principal": "*",
     "Resource": ["*"],
     "Condition": {"StringEquals": {"ResourceType": [
         "AWS::AutoScaling::AutoScalingGroup", "AWS::S3::Bucket", "AWS::IAM::Role"]}}},
]}, separators=(",", ":"))


def cluster_tag(cluster: Cluster) -> dict[str, str]:
    return {CLUSTER_TAG_PREFIX + clm_cluster_name(cluster): OWNED}


def ownership_tags(cluster: Cluster) -> list[dict[str, str]]:
    """The cluster tags CLM's stacks of the cluster carry: its name's, and on EKS also the id's
    (the main stack's); one of them is on every stack of the cluster but the etcd stack."""
    tags = [cluster_tag(cluster)]
    if clm_cluster_name(cluster) != cluster.id:
        tags.append({CLUSTER_TAG_PREFIX + cluster.id: OWNED})
    return tags


def main_tags(cluster: Cluster) -> dict[str, str]:
    # CLM tags its main stack with the id even on EKS, unlike every other stack.
    return {CLUSTER_TAG_PREFIX + cluster.id: OWNED, MAIN_STACK_TAG: "true"}


def node_pool_tags(cluster: Cluster, pool: str, profile: str) -> dict[str, str]:
    return {**cluster_tag(cluster), NODE_POOL_ROLE_TAG: "true", NODE_POOL_TAG: pool,
            NODE_POOL_TAG_LEGACY: pool, NODE_POOL_PROFILE_TAG: profile}


def node_pool_query(cluster: Cluster) -> dict[str, str]:
    """The tags every node-pool stack of the cluster carries (to find removed pools)."""
    return {**cluster_tag(cluster), NODE_POOL_ROLE_TAG: "true"}


def template_metadata(body: str, where: str) -> tuple[str, dict[str, str]]:
    """(`Metadata.StackName`, `Metadata.Tags`) of a rendered template; "" and {} where absent."""
    doc: Any = yamlfiles.load_template(body, where) if body.strip() else None
    metadata = doc.get("Metadata") if isinstance(doc, dict) else None
    if not isinstance(metadata, dict):
        return "", {}
    name = metadata.get("StackName") or ""
    tags = metadata.get("Tags") or {}
    if not isinstance(name, str) or not isinstance(tags, Mapping):
        raise ConfigError(f"{where}: Metadata.StackName must be a string and Metadata.Tags a "
                          "mapping")
    return name, {str(k): _tag_value(v) for k, v in tags.items()}


def _tag_value(value: Any) -> str:
    # Go's YAML reads `true` into a string field as "true"; so does this.
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
