"""kubernetes-on-aws (../shared/corpus) as a CLM user takes it over: `clmgit convert` writes the
dev channel as Jinja, the control branch says `layout: clm`, and a cluster of environment test
with four node pools (master, on-demand, spot, Karpenter) is reconciled end to end on moto and
the cluster's Kubernetes API emulator, CLM's values asked of moto (VPC, subnets, KMS, ACM, Route
53, EC2 instance types and AMIs): `--dry-run` plans it and writes nothing anywhere; a reconcile
makes CLM's stacks, uploads the generated files, applies every manifest and the Karpenter pool,
records the version, and the next run finds the cluster in sync."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import uuid
from pathlib import Path

import boto3
import pytest

from clmgit.convert.clmdata import sample_clusters
from clmgit.layout import CLM_LAYOUT
from clmgit.model import Cluster, cluster_to_dict
from clmgit.registry.file import clusters_yaml
from clmgit.registry.records import parse_file
from clmgit.sandbox.aws import REGION, publish_image
from clmgit.sandbox.configrepo import example_channels
from clmgit.sandbox.corpus import corpus_bundle
from clmgit.sandbox.fleet import LocalFleet
from tests.conftest import run_cli

BUNDLE = corpus_bundle()
if not BUNDLE.exists():
    pytest.skip(f"the corpus is missing: {BUNDLE}", allow_module_level=True)

pytestmark = pytest.mark.slow


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def account_as_clm_has_it(cluster_host: str) -> dict[str, str]:
    """What CLM finds in a cluster's account, made on moto: a VPC of its own with a node subnet
    per zone, the etcd KMS key, the API server's DNS zone and a certificate for it."""
    ec2 = boto3.Session(region_name=REGION).client("ec2")
    vpc = ec2.create_vpc(CidrBlock="172.31.0.0/16")["Vpc"]["VpcId"]
    for n, zone in enumerate("abc"):
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=f"172.31.{n * 32}.0/19",
                                   AvailabilityZone=f"{REGION}{zone}")["Subnet"]["SubnetId"]
        ec2.create_tags(Resources=[subnet], Tags=[{"Key": "kubernetes.io/role/node",
                                                   "Value": "1"}])
    kms = boto3.Session(region_name=REGION).client("kms")
    if "alias/etcd-cluster" not in {a["AliasName"] for a in kms.list_aliases()["Aliases"]}:
        key = kms.create_key(Description="etcd")["KeyMetadata"]["KeyId"]
        kms.create_alias(AliasName="alias/etcd-cluster", TargetKeyId=key)
    acm = boto3.Session(region_name=REGION).client("acm")
    domain = cluster_host.split(".", 1)[1]
    acm.request_certificate(DomainName=f"*.{domain}")
    route53 = boto3.Session(region_name=REGION).client("route53")
    if not route53.list_hosted_zones_by_name(DNSName=domain)["HostedZones"]:
        route53.create_hosted_zone(Name=domain, CallerReference=domain)
    return {"vpc_id": vpc}


@pytest.fixture(scope="module")
def koa(tmp_path_factory: pytest.TempPathFactory, moto_endpoint: str) -> Path:
    """A clone of the corpus with a bare origin; dev converted onto `dev-jinja`."""
    top = tmp_path_factory.mktemp("koa")
    origin = top / "origin.git"
    git("clone", "-q", "--bare", str(BUNDLE), str(origin), cwd=top)
    work = top / "work"
    git("clone", "-q", "--no-checkout", str(origin), str(work), cwd=top)
    converted = run_cli("--repo", str(work), "convert", "--from", "origin/dev", "--onto",
                        "dev-jinja")
    assert converted.code == 0, converted.err
    defaults = git("show", "origin/dev:cluster/config-defaults.yaml", cwd=work)
    for name, owner in set(re.findall(r'amiID "([^"]+)" "([0-9]+)"', defaults)):
        publish_image(name, owner)  # as Zalando publishes its images
    return work


@dataclasses.dataclass(frozen=True)
class Takeover:
    """A cluster of environment test, new to moto, on a control branch of its own."""

    cli: tuple[str, ...]  # --repo and --control-branch
    koa: Path  # a work tree of the corpus's clone
    cluster: Cluster
    suffix: str

    def registry(self) -> bytes:
        """The registry, clusters.yaml of the checked-out control branch."""
        return (self.koa / "clusters.yaml").read_bytes()


@pytest.fixture
def takeover(koa: Path, moto_endpoint: str, tmp_path: Path) -> Takeover:
    suffix = uuid.uuid4().hex[:6]
    [sample, *_] = sample_clusters(channel="dev")
    local_id = f"kube-{suffix}"
    items = {**sample.config_items, **account_as_clm_has_it(f"{local_id}.example.org"),
             "etcd_stack_name": f"etcd-{suffix}", "karpenter_pools_enabled": "true"}
    cluster = dataclasses.replace(
        sample, id=f"aws:123456789012:{REGION}:{local_id}", alias=local_id, local_id=local_id,
        api_server_url=f"https://{local_id}.example.org", config_items=items,
        lifecycle_status="ready")
    channels = {**example_channels(), "channels/dev.yaml": "channel: dev\nbranch: dev-jinja\n"}
    control = {**channels, "clusters.yaml": clusters_yaml([cluster_to_dict(cluster)]),
               "clmgit.yaml": "layout: clm\n"}
    # A work tree of its own (the control branch is checked out there), sharing koa's refs.
    branch, work = f"main-{suffix}", tmp_path / "control"
    git("worktree", "add", "-q", "--no-checkout", "--detach", str(work), "dev-jinja", cwd=koa)
    git("checkout", "-q", "--orphan", branch, cwd=work)
    for path, text in control.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git("add", *control, cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "control", cwd=work)
    return Takeover(("--repo", str(work), "--control-branch", branch), work, cluster, suffix)


def test_a_converted_kubernetes_on_aws_cluster_plans_end_to_end(
        takeover: Takeover, tmp_path: Path) -> None:
    koa, cluster, suffix = takeover.koa, takeover.cluster, takeover.suffix
    local_id = cluster.local_id
    before = git("for-each-ref", cwd=koa), takeover.registry()

    with LocalFleet([cluster], tmp_path / "kubeconfig", layout=CLM_LAYOUT) as fleet:
        dry = run_cli(*takeover.cli, "reconcile", "--kubeconfig", str(fleet.kubeconfig),
                      "--dry-run", "--output", "json")
        server = fleet.server(cluster.alias)
        written = {kind: server.objects(api_version, kind) for api_version, kind in (
            ("apps/v1", "Deployment"), ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
            ("autoscaling/v2", "HorizontalPodAutoscaler"),
            ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"))}

    assert dry.code == 0, dry.err + dry.out[-3000:]
    [planned] = json.loads(dry.out)["clusters"]
    assert planned["outcome"] == "planned", planned
    changes = planned["changes"]
    # CLM's stacks in CLM's order: etcd, main, master pools, the other pools; none for Karpenter.
    pool = f"nodepool-%s-{cluster.id.replace(':', '-')}"
    assert [c.split(":")[0] for c in changes if c.startswith("stack ")] == [
        f"stack etcd-{suffix}", f"stack {local_id}", "stack " + pool % "default-master",
        "stack " + pool % "default-worker", "stack " + pool % "spot"]
    assert all("would create" in c for c in changes if c.startswith("stack "))
    # The manifests, on a cluster that has none of them yet, the Karpenter pool after them.
    objects = [c for c in changes if not c.startswith(("stack ", "node pool "))]
    assert len(objects) > 300 and all(c.endswith(": would create") for c in objects)
    kinds = {c.split(" ", 1)[0] for c in objects}
    assert {"CustomResourceDefinition", "Deployment", "VerticalPodAutoscaler",
            "HorizontalPodAutoscaler", "ValidatingWebhookConfiguration", "APIService"} <= kinds
    assert [c for c in changes if c.startswith("node pool ")] == [
        "node pool karpenter: EC2NodeClass karpenter: would create",
        "node pool karpenter: NodePool karpenter: would create"]
    # ...and nothing written: not the repository, not AWS, not the cluster.
    assert (git("for-each-ref", cwd=koa), takeover.registry()) == before
    assert not [s for s in stacks(REGION) if suffix in s]
    assert written == {kind: [] for kind in written}


def stacks(region: str) -> list[str]:
    """The stacks of the region (a dry run's change sets of new stacks leave deleted ones)."""
    cf = boto3.Session(region_name=region).client("cloudformation")
    return [s["StackName"] for page in cf.get_paginator("list_stacks").paginate()
            for s in page["StackSummaries"] if s["StackStatus"] != "DELETE_COMPLETE"]


def test_a_converted_kubernetes_on_aws_cluster_is_taken_over_and_stays_in_sync(
        takeover: Takeover, tmp_path: Path) -> None:
    cluster, suffix, local_id = takeover.cluster, takeover.suffix, takeover.cluster.local_id
    sha = git("rev-parse", "dev-jinja", cwd=takeover.koa)

    with LocalFleet([cluster], tmp_path / "kubeconfig", layout=CLM_LAYOUT) as fleet:
        kubeconfig = ("--kubeconfig", str(fleet.kubeconfig))
        applied = run_cli(*takeover.cli, "reconcile", *kubeconfig, "--output", "json")
        again = run_cli(*takeover.cli, "reconcile", *kubeconfig, "--output", "json")
        server = fleet.server(cluster.alias)
        deployments = server.objects("apps/v1", "Deployment")
        karpenter = server.objects("karpenter.sh/v1beta1", "NodePool")

    assert applied.code == 0, applied.err + applied.out[-3000:]
    [result] = json.loads(applied.out)["clusters"]
    assert result["outcome"] == "applied" and result["version"].startswith(f"{sha}#"), result
    pool = f"nodepool-%s-{cluster.id.replace(':', '-')}"
    assert sorted(s for s in stacks(REGION) if suffix in s) == sorted([
        f"etcd-{suffix}", local_id, pool % "default-master", pool % "default-worker",
        pool % "spot"])
    assert {key.split("/")[1] for key in uploaded(cluster)} == {"etcd", "master", "worker"}
    assert len(deployments) >= 20
    assert [o["metadata"]["name"] for o in karpenter] == ["karpenter"]
    [recorded] = parse_file(takeover.registry(), "clusters.yaml")
    assert recorded.status.current_version == result["version"]

    assert again.code == 0, again.err
    [second] = json.loads(again.out)["clusters"]
    assert (second["outcome"], second["version"]) == ("in-sync", result["version"])


def uploaded(cluster: Cluster) -> list[str]:
    """The keys of CLM's generated files in the account's bucket for them."""
    s3 = boto3.Session(region_name=REGION).client("s3")
    bucket = f"cluster-lifecycle-manager-{cluster.infrastructure_account.split(':')[1]}-{REGION}"
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=f"{cluster.local_id}/")
    return [o["Key"] for o in listed.get("Contents", [])]


def test_render_previews_a_converted_cluster_without_aws(takeover: Takeover,
                                                         tmp_path: Path) -> None:
    result = run_cli(*takeover.cli, "render", "--cluster", takeover.cluster.alias,
                     "--out", str(tmp_path / "out"))

    assert result.code == 0, result.err
    assert "rendered without AWS: the VPC, subnets, AMI ids, instance types" in result.err
    written = sorted(p.relative_to(tmp_path / "out").parts[0]
                     for p in (tmp_path / "out").rglob("*.yaml"))
    assert written.count("stacks") == 2 and written.count("manifests") > 300  # etcd and main
    pools = sorted((tmp_path / "out" / "node-pools").iterdir())  # Karpenter's are manifests
    assert len(pools) == 3 and all("ami-" in p.read_text() for p in pools)
    assert any("kind: EC2NodeClass" in p.read_text()
               for p in (tmp_path / "out" / "manifests").rglob("*.yaml"))
