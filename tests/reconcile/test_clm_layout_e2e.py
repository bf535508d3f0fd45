"""A config repo in CLM's layout (`clmgit.yaml`: `layout: clm`) end to end through the real CLI,
on moto and a Kubernetes emulator per cluster: a dry run plans CLM's stacks and writes nothing;
a reconcile makes exactly CLM's stacks (names and tags) and applies the Karpenter pool as
objects; a malformed `clmgit.yaml` is refused in one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from clmgit_sandbox.aws import REGION
from clmgit_sandbox.configrepo import ConfigRepoBuilder, example_channels
from clmgit_sandbox.configtree import cluster_tree
from clmgit_sandbox.fleet import LocalFleet

from clmgit.layout import CLM_LAYOUT
from clmgit.model import parse_cluster
from clmgit.registry.file import clusters_yaml
from tests.helpers.aws import all_objects, all_stacks
from tests.helpers.cli import run_cli
from tests.helpers.sandbox import make_records

pytestmark = pytest.mark.slow

ETCD = """\
Resources:
  EtcdBackups:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: {{ cluster.config_items.etcd_timeout }}
"""
CRDS = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: nodepools.karpenter.sh}
spec:
  group: karpenter.sh
  scope: Cluster
  names: {kind: NodePool, plural: nodepools, singular: nodepool, listKind: NodePoolList}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""
PROVISIONERS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: "{{ node_pool.name }}"
spec:
  limits: {cpu: "100"}
"""


def clm_tree(etcd_timeout: int = 30) -> dict[str, str]:
    """The sandbox's tree, moved into CLM's places."""
    tree = cluster_tree(1)
    tree["cluster/cluster.yaml"] = tree.pop("cluster/stack.yaml")
    logs = tree.pop("cluster/cf-manifests/logs.yaml")
    tree["cluster/cf-manifests/logs.yaml"] = logs.replace(
        "Resources:", "Metadata:\n  StackName: logs-{{ cluster.local_id }}\nResources:", 1)
    tree["cluster/config-defaults.yaml"] += f"etcd_timeout: \"{etcd_timeout}\"\n"
    tree["cluster/etcd/stack.yaml"] = ETCD
    tree["cluster/node-pools/master-default/stack.yaml"] = tree[
        "cluster/node-pools/worker-default/stack.yaml"]
    tree["cluster/node-pools/worker-karpenter/provisioners.yaml"] = PROVISIONERS
    tree["cluster/manifests/00-karpenter/crds.yaml"] = CRDS
    return tree


@pytest.fixture
def clm_repo(moto_endpoint: str, tmp_path: Path):
    builder = ConfigRepoBuilder(tmp_path / "config")
    # A worker file CLM generates: uploaded to S3 before the pool's stack (a dry run uploads none).
    files = "files:\n  - path: /etc/motd\n    data: aGVsbG8K\n    permissions: 0644\n"
    builder.commit("dev", {**clm_tree(), "cluster/node-pools/worker-default/files.yaml": files},
                   "CLM layout")
    for channel in ("alpha", "beta", "stable"):
        builder.git("branch", channel, "dev")
    [record] = make_records(1)
    # moto lives for the whole session: a name of its own instead of CLM's default.
    record["config_items"]["etcd_stack_name"] = f"etcd-{record['local_id']}"
    record["node_pools"] = [
        *record["node_pools"],
        {**record["node_pools"][0], "name": "default-master", "profile": "master-default"},
        {**record["node_pools"][0], "name": "karp", "profile": "worker-karpenter"},
    ]
    builder.commit("main", {**example_channels(), "clusters.yaml": clusters_yaml([record]),
                            "clmgit.yaml": "layout: clm\n"}, "Channels, clusters, layout")
    cluster = parse_cluster(record, "record")
    # An account CLM runs in has the etcd key (CLM's computed values describe its alias).
    kms = boto3.Session(region_name=REGION).client("kms")
    aliases = {a["AliasName"] for a in kms.list_aliases()["Aliases"]}
    if "alias/etcd-cluster" not in aliases:
        key = kms.create_key(Description="etcd")["KeyMetadata"]["KeyId"]
        kms.create_alias(AliasName="alias/etcd-cluster", TargetKeyId=key)
    with LocalFleet([cluster], tmp_path / "kubeconfig", layout=CLM_LAYOUT) as fleet:
        yield builder, cluster, fleet


def uploaded(cluster) -> list[str]:
    """The keys of CLM's generated files in the account's bucket for them."""
    s3 = boto3.Session(region_name=REGION).client("s3")
    bucket = f"cluster-lifecycle-manager-{cluster.infrastructure_account.split(':')[1]}-{REGION}"
    if bucket not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
        return []
    return [o["Key"] for o in all_objects(s3, bucket, f"{cluster.local_id}/")]


def stacks_of(cluster) -> dict[str, dict[str, str]]:
    cf = boto3.Session(region_name=REGION).client("cloudformation")
    return {s["StackName"]: {t["Key"]: t["Value"] for t in s["Tags"]} for s in all_stacks(cf)
            if cluster.local_id in s["StackName"] or cluster.id.replace(":", "-") in s["StackName"]}


def test_dry_run_then_reconcile_make_clms_stacks_and_karpenter_objects(clm_repo) -> None:
    builder, cluster, fleet = clm_repo
    cli = ("--repo", str(builder.path))
    kubeconfig = ("--kubeconfig", str(fleet.kubeconfig))
    registry_before = (builder.path / "clusters.yaml").read_bytes()
    pool = f"nodepool-%s-{cluster.id.replace(':', '-')}"
    etcd = f"etcd-{cluster.local_id}"  # the config item etcd_stack_name

    dry = run_cli(*cli, "reconcile", *kubeconfig, "--dry-run", "--output", "json")

    assert dry.code == 0, dry.out
    [planned] = json.loads(dry.out)["items"]
    assert planned["outcome"] == "planned", planned
    creates = [line.split(":")[0] for line in planned["changes"]
               if line.startswith("stack ") and "would create" in line]
    assert creates == [f"stack {etcd}", f"stack {cluster.local_id}",
                       f"stack logs-{cluster.local_id}", "stack " + pool % "default-master",
                       "stack " + pool % "default-worker"]
    assert (builder.path / "clusters.yaml").read_bytes() == registry_before
    assert stacks_of(cluster) == {}
    assert uploaded(cluster) == []

    applied = run_cli(*cli, "reconcile", *kubeconfig)

    assert applied.code == 0, applied.err + applied.out
    stacks = stacks_of(cluster)
    assert sorted(stacks) == sorted([etcd, cluster.local_id, f"logs-{cluster.local_id}",
                                     pool % "default-master", pool % "default-worker"])
    assert stacks[pool % "default-worker"]["kubernetes.io/node-pool"] == "default-worker"
    assert not any(key.startswith("clmgit/") for tags in stacks.values() for key in tags)
    assert stacks[etcd] == {"application": "kubernetes", "component": "etcd-cluster"}
    [generated] = uploaded(cluster)  # CLM's generated files, computed from the account
    assert generated.startswith(f"{cluster.local_id}/worker/") and generated.endswith(".userdata")
    server = fleet.server(cluster.alias)
    assert [o["metadata"]["name"] for o in server.objects("karpenter.sh/v1", "NodePool")] == [
        "karp"]


@pytest.mark.parametrize(("text", "sentence"), [
    ("layout: clmm\n", "clmgit.yaml on branch 'main': key 'layout' must be one of clmgit, clm, "
                       "not 'clmm'"),
    ("layuot: clm\n", "clmgit.yaml on branch 'main': unknown key 'layuot'"),
    ("layout: [clm\n", "clmgit.yaml on branch 'main' is not valid YAML"),
])
def test_a_malformed_setting_is_refused_in_one_sentence(tmp_path: Path, text: str,
                                                        sentence: str) -> None:
    builder = ConfigRepoBuilder(tmp_path / "config")
    builder.commit("dev", clm_tree(), "CLM layout")
    [record] = make_records(1)
    builder.commit("main", {**example_channels(), "clusters.yaml": clusters_yaml([record]),
                            "clmgit.yaml": text}, "bad setting")
    result = run_cli("--repo", str(builder.path), "reconcile", "--dry-run")

    assert result.code == 1
    assert result.err.strip().splitlines() == [result.err.strip()]
    assert sentence in result.err
