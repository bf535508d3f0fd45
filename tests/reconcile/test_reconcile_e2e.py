"""`clmgit reconcile` end to end: a real config repo, moto over HTTP, the Kubernetes emulator."""

from __future__ import annotations

import json
import threading

import boto3
import botocore.client
import pytest
from clmgit_sandbox.aws import REGION

from clmgit.model import desired_version
from tests.helpers.aws import all_groups

pytestmark = pytest.mark.slow  # end to end: real processes, moto and the emulator

WRITE_PREFIXES = ("Create", "Update", "Delete", "Execute", "Put", "Set", "Terminate", "Run",
                  "Attach", "Detach", "Modify")


@pytest.fixture
def aws_calls(monkeypatch):
    """Every AWS API operation made in this process, by name."""
    made: list[str] = []
    original = botocore.client.BaseClient._make_api_call

    def record(self, operation, params):
        if threading.current_thread().name != "kubelet":  # the node simulator's own reads
            made.append(operation)
        return original(self, operation, params)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", record)
    return made


def instances(cluster) -> list[str]:
    asg = boto3.Session(region_name=REGION).client("autoscaling")
    groups = all_groups(asg)
    return sorted(i["InstanceId"] for g in groups for i in g["Instances"]
                  if any(t["Key"] == f"kubernetes.io/cluster/{cluster.id}"
                         for t in g.get("Tags", ())))


def test_a_requested_cluster_ends_ready_with_stacks_manifests_and_its_version(sandbox):
    result = sandbox.reconcile()
    assert result.code == 0, result.err
    [cluster] = sandbox.clusters().values()
    assert cluster.lifecycle_status == "ready"
    assert cluster.status.current_version == desired_version(sandbox.versions[0], cluster)
    assert (cluster.status.next_version, cluster.status.problems) == ("", ())
    local = cluster.local_id
    assert sandbox.stacks(cluster) == sorted(
        [local, f"logs-{local}", f"nodepool-default-worker-{local}"])
    server = sandbox.fleet.server(cluster.alias)
    settings = server.read("v1", "ConfigMap", "platform-settings", "platform")
    assert settings["data"]["cluster"] == cluster.alias
    assert settings["data"]["audit_bucket"] == f"audit-{local}"  # a stack output, really
    assert server.read("apps/v1", "Deployment", "echo", "platform") is not None
    assert len(instances(cluster)) == 1, result.out
    assert "applied" in result.out


def test_a_second_reconcile_makes_no_cloud_or_kubernetes_write(sandbox, aws_calls):
    assert sandbox.reconcile().code == 0
    server = sandbox.fleet.server(sandbox.records[0]["alias"])
    before = server.stats.mutations
    registry = (sandbox.path / "clusters.yaml").read_bytes()
    aws_calls.clear()

    result = sandbox.reconcile()
    assert (result.code, result.out.strip()) == (0, "1 in-sync")
    assert server.stats.mutations == before
    assert aws_calls == []  # not even a read: the fast path needs no cloud
    assert (sandbox.path / "clusters.yaml").read_bytes() == registry


def test_a_new_commit_is_applied_with_a_rolling_update_and_a_post_apply_deletion(sandbox):
    assert sandbox.reconcile().code == 0
    [cluster] = sandbox.clusters().values()
    server = sandbox.fleet.server(cluster.alias)
    assert server.read("v1", "ConfigMap", "legacy-settings", "platform") is not None
    old_nodes = instances(cluster)
    first = cluster.status.current_version

    v2 = sandbox.commit_version(2)
    status = json.loads(sandbox.cli("status", "--output", "json").out)
    assert [s["state"] for s in status["items"]] == ["pending"]
    result = sandbox.reconcile()
    assert result.code == 0, result.err
    assert "post_apply: deleted ConfigMap platform/legacy-settings" in result.out
    assert "node pool default-worker: replaced 1 node(s) in 1 wave(s)" in result.out

    [cluster] = sandbox.clusters().values()
    assert cluster.status.current_version == desired_version(v2, cluster)
    assert cluster.status.last_version == first
    assert server.read("v1", "ConfigMap", "legacy-settings", "platform") is None
    assert server.read("v1", "ConfigMap", "platform-settings", "platform")["data"][
        "tracing"] == "enabled"
    assert instances(cluster) and set(instances(cluster)).isdisjoint(old_nodes)
    nodes = server.objects("v1", "Node")
    assert nodes and not any(n.get("spec", {}).get("unschedulable") for n in nodes)


def test_a_changed_config_item_alone_triggers_an_update(sandbox):
    assert sandbox.reconcile().code == 0
    record = sandbox.records[0]
    record["config_items"] = {**record["config_items"], "log_level": "debug"}
    record["lifecycle_status"] = "ready"
    from clmgit.model import status_to_dict

    record["status"] = status_to_dict(sandbox.registry.clusters()[0].status) | {"problems": []}
    from clmgit.registry.file import clusters_yaml

    # The file registry is the working tree's clusters.yaml: an operator edits it there.
    (sandbox.path / "clusters.yaml").write_text(clusters_yaml([record]))
    planned = sandbox.reconcile("--dry-run")  # issue 15, case 10: a dry run claims nothing
    assert planned.code == 0, planned.err
    assert "ConfigMap platform/platform-settings: would configure" in planned.out
    assert ": configured" not in planned.out and ": created" not in planned.out
    result = sandbox.reconcile()
    assert result.code == 0, result.err
    assert "ConfigMap platform/platform-settings: configured" in result.out
    server = sandbox.fleet.server(record["alias"])
    assert server.read("v1", "ConfigMap", "platform-settings", "platform")["data"][
        "log_level"] == "debug"


def test_a_failing_cluster_does_not_stop_the_others_and_the_run_exits_4(sandbox_factory):
    sandbox = sandbox_factory(2)
    broken = sandbox.records[0]
    broken["node_pools"][0]["profile"] = "no-such-profile"
    from clmgit.registry.file import clusters_yaml

    (sandbox.path / "clusters.yaml").write_text(clusters_yaml(sandbox.records))
    result = sandbox.reconcile()
    assert result.code == 4
    assert "1 cluster(s) failed" in result.err
    bad, good = sandbox.clusters()[broken["alias"]], sandbox.clusters()[sandbox.records[1][
        "alias"]]
    assert "no-such-profile" in bad.status.problems[0].title
    assert bad.status.next_version and not bad.status.current_version
    assert good.lifecycle_status == "ready" and good.status.current_version
    assert sandbox.stacks(bad) == []  # rendering failed before anything was applied


def test_dry_run_shows_the_plan_and_changes_nothing(sandbox, aws_calls):
    before = (sandbox.path / "clusters.yaml").read_bytes()
    result = sandbox.reconcile("--dry-run", "--output", "json")
    assert result.code == 0, result.out
    import json

    [planned] = json.loads(result.out)["items"]
    assert planned["outcome"] == "planned", planned
    assert planned["outcome"] == "planned"
    assert any("would create" in line for line in planned["changes"])
    assert (sandbox.path / "clusters.yaml").read_bytes() == before
    writes = [op for op in aws_calls if op.startswith(WRITE_PREFIXES)
              and op not in ("CreateChangeSet", "DeleteChangeSet", "DeleteStack")]
    assert writes == []
    [cluster] = sandbox.clusters().values()
    assert sandbox.stacks(cluster) == []


def test_github_step_summary_gets_a_markdown_table(sandbox, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert sandbox.reconcile("--shard", "0/1").code == 0
    text = summary.read_text()
    assert text.startswith(r"### clmgit reconcile \(shard 0/1\)")  # Markdown-escaped text
    assert "| cluster | action | outcome | version | time | detail |" in text
    assert f"| {sandbox.records[0]['alias']} | create | applied |" in text


def test_decommission_deletes_every_stack_and_marks_the_cluster(sandbox):
    assert sandbox.reconcile().code == 0
    [cluster] = sandbox.clusters().values()
    assert sandbox.stacks(cluster)
    result = sandbox.cli("decommission", "--cluster", cluster.alias, "--yes",
                         "--kubeconfig", str(sandbox.kubeconfig))
    assert result.code == 0, result.err
    assert sandbox.stacks(cluster) == []
    [cluster] = sandbox.clusters().values()
    assert cluster.lifecycle_status == "decommissioned"
    assert sandbox.reconcile().out.strip() == "no clusters selected"


def test_provision_applies_a_working_tree_without_git(sandbox, tmp_path):
    from clmgit_sandbox.configtree import cluster_tree

    work = tmp_path / "work"
    for path, text in cluster_tree(2).items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    alias = sandbox.records[0]["alias"]
    result = sandbox.cli("provision", "--cluster", alias, "--directory", str(work),
                         "--kubeconfig", str(sandbox.kubeconfig))
    assert result.code == 0, result.err
    [cluster] = sandbox.clusters().values()
    # CLM versions a provisioned directory by channel.Directory.ID(), the literal "<dir>",
    # not by its path: api.ClusterVersion is ConfigVersion + "#" + ClusterHash.
    assert cluster.status.current_version == desired_version("<dir>", cluster)
    settings = sandbox.fleet.server(alias).read("v1", "ConfigMap", "platform-settings",
                                                "platform")
    assert settings["data"]["tracing"] == "enabled"  # version 2 of the tree
    # No in-sync shortcut: provisioning the same tree again applies it again.
    again = sandbox.cli("provision", "--cluster", alias, "--directory", str(work),
                        "--kubeconfig", str(sandbox.kubeconfig), "--output", "json")
    assert again.code == 0 and '"outcome": "applied"' in again.out, again.out
    bad = sandbox.cli("provision", "--cluster", alias, "--directory", str(tmp_path / "nope"))
    assert bad.code == 1 and "has no cluster/ directory" in bad.err


def test_a_stack_that_fails_records_the_stack_reason_and_not_the_version(sandbox):
    from clmgit_sandbox.configtree import cluster_tree

    assert sandbox.reconcile().code == 0
    [cluster] = sandbox.clusters().values()
    applied = cluster.status.current_version
    tree = cluster_tree(2)
    tree["cluster/cf-manifests/logs.yaml"] = tree["cluster/cf-manifests/logs.yaml"].replace(
        "AWS::S3::Bucket", "AWS::S3::Buckett")
    sandbox.builder.commit("dev", tree, "A typo in a resource type")
    result = sandbox.reconcile()
    assert result.code == 4
    [cluster] = sandbox.clusters().values()
    [problem] = cluster.status.problems
    assert "logs-" in problem.title and "AWS::S3::Buckett" in problem.title
    assert cluster.status.current_version == applied  # not marked as applied
    assert cluster.status.next_version and cluster.status.next_version != applied


def test_decommission_scales_kube_system_down_first(sandbox):
    assert sandbox.reconcile().code == 0
    from clmgit_sandbox.kubeapi.fixtures import make_deployment

    alias = sandbox.records[0]["alias"]
    server = sandbox.fleet.server(alias)
    server.seed(make_deployment("coredns", namespace="kube-system", replicas=2))
    result = sandbox.cli("decommission", "--cluster", alias, "--yes", "--kubeconfig",
                         str(sandbox.kubeconfig))
    assert result.code == 0, result.err
    assert "scaled Deployment kube-system/coredns to 0" in result.out
    assert server.read("apps/v1", "Deployment", "coredns", "kube-system")["spec"][
        "replicas"] == 0


def test_decommission_refuses_a_cluster_not_marked_for_it_before_any_cloud_call(
        sandbox, aws_calls):
    """Issue 15, case 7: a `ready` cluster is not taken down by a typo in --cluster."""
    from clmgit_sandbox.kubeapi.fixtures import make_deployment

    assert sandbox.reconcile().code == 0
    [cluster] = sandbox.clusters().values()
    server = sandbox.fleet.server(cluster.alias)
    server.seed(make_deployment("coredns", namespace="kube-system", replicas=2))
    stacks = sandbox.stacks(cluster)
    aws_calls.clear()
    refused = sandbox.cli("decommission", "--cluster", cluster.alias,
                          "--kubeconfig", str(sandbox.kubeconfig))
    assert refused.code == 1, refused.out
    assert refused.err == (
        f"error: cluster {cluster.alias} is 'ready', not 'decommission-requested': set that in "
        "the registry, or pass --yes (--dry-run lists what would be deleted)\n")
    assert aws_calls == []
    assert server.read("apps/v1", "Deployment", "coredns", "kube-system")["spec"][
        "replicas"] == 2

    planned = sandbox.cli("decommission", "--cluster", cluster.alias, "--dry-run",
                          "--kubeconfig", str(sandbox.kubeconfig))
    assert planned.code == 0, planned.err
    for name in stacks:
        assert f"stack {name}: would delete" in planned.out, planned.out
    assert "would scale Deployment kube-system/coredns to 0" in planned.out
    assert sandbox.stacks(cluster) == stacks
    [cluster] = sandbox.clusters().values()
    assert cluster.lifecycle_status == "ready"
