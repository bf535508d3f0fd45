"""A small config tree in CLM's layout (`layout: clm`), shared by the engine's tests of it.

Every stack template makes one SQS queue (moto creates those at once); the Karpenter profile has
no stack, only `provisioners.yaml`, and the manifests install Karpenter's CRDs.
"""

from __future__ import annotations

from pathlib import Path

from clmgit_sandbox.aws import ACCOUNT, REGION
from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record, example_channels

from clmgit.model import Cluster, NodePool
from clmgit.registry.file import clusters_yaml


def queue(logical_id: str, *, metadata: str = "") -> str:
    return (f"{metadata}Resources:\n  {logical_id}:\n    Type: AWS::SQS::Queue\n"
            "    Properties:\n      VisibilityTimeout: 30\n")


def crd(group: str, kind: str, plural: str) -> str:
    return f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  scope: Cluster
  names: {{kind: {kind}, plural: {plural}, singular: {kind.lower()}, listKind: {kind}List}}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
"""


PROVISIONERS = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: {{ node_pool.name }}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: {{ node_pool.name }}}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: {{ node_pool.name }}
spec:
  amiFamily: AL2
"""

TREE: dict[str, str] = {
    "cluster/config-defaults.yaml": "etcd_stack_name: etcd-{{ cluster.local_id }}\n",
    "cluster/cluster.yaml": queue("Main", metadata=(
        "Metadata:\n  Tags:\n    InfrastructureComponent: \"true\"\n")),
    "cluster/etcd/stack.yaml": queue("Etcd"),
    "cluster/cf-manifests/10-extra.yaml": queue("Extra", metadata=(
        "Metadata:\n  StackName: extra-{{ cluster.local_id }}\n  Tags:\n    team: teapot\n")),
    "cluster/cf-manifests/20-empty.yaml": "{% if false %}Resources: {}{% endif %}\n# nothing\n",
    "cluster/cf-manifests/cf-deletions.yaml": (
        "pre_apply:\n  - stackName: old-{{ cluster.local_id }}\n"),
    "cluster/node-pools/master-default/stack.yaml": queue("Master"),
    "cluster/node-pools/worker-default/stack.yaml": queue("Worker"),
    "cluster/node-pools/worker-karpenter/provisioners.yaml": PROVISIONERS,
    "cluster/manifests/karpenter/crds.yaml": (
        crd("karpenter.sh", "NodePool", "nodepools") + "---\n"
        + crd("karpenter.k8s.aws", "EC2NodeClass", "ec2nodeclasses")),
}


def clm_cluster(local_id: str, *, karpenter: tuple[str, ...] = ("karp",)) -> Cluster:
    """A zalando-aws cluster with a worker pool listed before its master pool (CLM applies
    masters first) and Karpenter pools."""
    return Cluster(
        id=f"aws:{ACCOUNT}:{REGION}:{local_id}", local_id=local_id, region=REGION,
        infrastructure_account=f"aws:{ACCOUNT}", provider="zalando-aws",
        api_server_url=f"https://{local_id}.example.org",
        node_pools=(
            NodePool(name="default-worker", profile="worker-default", min_size=1, max_size=3),
            NodePool(name="default-master", profile="master-default", min_size=1, max_size=2),
            *(NodePool(name=name, profile="worker-karpenter") for name in karpenter),
        ),
    )


#: The smallest CLM tree `render` and `diff` read: a main, an etcd, an extra and a pool stack,
#: and one manifest.
SMALL_TREE: dict[str, str] = {
    "cluster/cluster.yaml": "Resources:\n  Main:\n    Type: AWS::SQS::Queue\n",
    "cluster/etcd/stack.yaml": "Resources:\n  Etcd:\n    Type: AWS::SQS::Queue\n",
    "cluster/cf-manifests/x.yaml": (
        "Metadata:\n  StackName: x-{{ cluster.local_id }}\n"
        "Resources:\n  X:\n    Type: AWS::SQS::Queue\n"),
    "cluster/node-pools/worker-default/stack.yaml": "Resources:\n  P:\n    Type: AWS::SQS::Queue\n",
    "cluster/manifests/a/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n"),
}


def clm_repo(tmp_path: Path, *, setting: str | None = "layout: clm\n") -> ConfigRepoBuilder:
    """A config repo of `SMALL_TREE` on every channel branch with `clmgit.yaml` set to `setting`
    and one cluster, kube-1, on alpha."""
    builder = ConfigRepoBuilder(tmp_path / "config")
    builder.commit("dev", SMALL_TREE, "CLM layout")
    for channel in ("alpha", "beta", "stable"):
        builder.git("branch", channel, "dev")
    record = cluster_record("aws:123456789012:eu-central-1:kube-1", channel="alpha")
    files = {**example_channels(), "clusters.yaml": clusters_yaml([record])}
    if setting is not None:
        files["clmgit.yaml"] = setting
    builder.commit("main", files, "Channels and clusters")
    return builder
