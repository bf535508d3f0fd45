"""kubernetes-on-aws (../shared/corpus) as a CLM user takes it over: `clmgit convert` writes the
dev channel as Jinja, the control branch says `layout: clm`, and a cluster of environment test
with four node pools (master, on-demand, spot, Karpenter) is reconciled end to end on moto and
the cluster's Kubernetes API emulator, CLM's values asked of moto (VPC, subnets, KMS, ACM, Route
53, EC2 instance types and AMIs): `--dry-run` plans it and writes nothing anywhere; a reconcile
makes CLM's stacks, uploads the generated files, applies every manifest and the Karpenter pool,
records the version, and the next run finds the cluster in sync. And the same cluster made as
CLM makes it (`AsClm`: boto3, Go's gzip) is taken over without a change; a control (a new
instance type) shows the dry run planning the replacements the run makes."""

from __future__ import annotations

import base64
import dataclasses
import gzip
import json
import re
import subprocess
import uuid
from pathlib import Path

import boto3
import pytest
from clmgit_sandbox.aws import REGION, publish_image
from clmgit_sandbox.configrepo import example_channels
from clmgit_sandbox.fleet import LocalFleet

from clmgit.adapters.aws.clmaccount import ClmAccount
from clmgit.adapters.git import GitRepo
from clmgit.config import yamlfiles
from clmgit.config.computed import files_archive, user_data
from clmgit.config.render import cluster_renderer
from clmgit.config.source import GitConfigSource
from clmgit.convert.clmdata import sample_clusters
from clmgit.layout import CLM_LAYOUT
from clmgit.model import Cluster, cluster_to_dict
from clmgit.registry.file import clusters_yaml
from clmgit.registry.records import parse_file
from clmgit.stacknames import node_pool_stack_name
from tests.helpers.aws import all_groups, all_objects, all_stack_summaries
from tests.helpers.certs import self_signed
from tests.helpers.cli import run_cli
from tests.helpers.data import corpus_or_skip
from tests.helpers.gojudge import go_gzip

BUNDLE = corpus_or_skip()

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
    # Imported: it is ISSUED at once (a requested one is issued by moto a minute later, so
    # whether a render saw it would depend on the time).
    acm.import_certificate(**self_signed(f"*.{domain}"))
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
def takeover(koa: Path, moto_endpoint: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Takeover:
    # The render budget (tests/config/test_render_budget.py) is not what these tests prove: on
    # a busy machine the corpus's config-defaults.yaml alone took more than its 10 s.
    monkeypatch.setenv("CLMGIT_RENDER_TEMPLATE_SECONDS", "300")
    monkeypatch.setenv("CLMGIT_RENDER_CLUSTER_SECONDS", "900")
    suffix = uuid.uuid4().hex[:6]
    [sample, *_] = sample_clusters(channel="dev")
    local_id = f"kube-{suffix}"
    items = {**sample.config_items, **account_as_clm_has_it(f"{local_id}.example.org"),
             "etcd_stack_name": f"etcd-{suffix}", "karpenter_pools_enabled": "true",
             "etcd_s3_backup_bucket": f"etcd-backup-{suffix}",  # a bucket name is global
             # The sandbox's waits, short, as in tests/reconcile's sandboxes: the node simulator
             # answers within 50 ms, and CLM's 30 s poll would only make the replacements wait.
             "drain_poll_interval": "0.1s"}
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
    [planned] = json.loads(dry.out)["items"]
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
    return [s["StackName"] for s in all_stack_summaries(cf)
            if s["StackStatus"] != "DELETE_COMPLETE"]


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
    [result] = json.loads(applied.out)["items"]
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
    [second] = json.loads(again.out)["items"]
    assert (second["outcome"], second["version"]) == ("in-sync", result["version"])


def uploaded(cluster: Cluster) -> list[str]:
    """The keys of CLM's generated files in the account's bucket for them."""
    s3 = boto3.Session(region_name=REGION).client("s3")
    bucket = f"cluster-lifecycle-manager-{cluster.infrastructure_account.split(':')[1]}-{REGION}"
    return [o["Key"] for o in all_objects(s3, bucket, f"{cluster.local_id}/")]


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


# -- a zero-change takeover of a cluster CLM made ------------------------------------------------

CLM_TAGS_ETCD = {"application": "kubernetes", "component": "etcd-cluster"}


class AsClm:
    """Makes a cluster's stacks as CLM makes them — CreateStack with CLM's names, tags (the
    template's `Metadata.Tags` under CLM's own, written here from CLM's source, not clmgit's),
    termination protection, no stack policy — and its generated files as CLM uploads them. The
    templates are rendered by clmgit (byte-identical to CLM's, which `clmgit convert --check`
    proves) except `Values.UserData`, which is gzipped by Go as CLM does; the files archives are
    tar.gz of Go's gzip. Nothing goes through clmgit's engine."""

    def __init__(self, takeover: Takeover) -> None:
        self.cluster = takeover.cluster
        self.session = boto3.Session(region_name=REGION)
        self.cf = self.session.client("cloudformation")
        source = GitConfigSource(GitRepo(takeover.koa), follow_symlinks=True)
        self.renderer = cluster_renderer(source, git("rev-parse", "dev-jinja", cwd=takeover.koa),
                                         self.cluster, CLM_LAYOUT,
                                         account=ClmAccount(self.session))

    def create(self) -> None:
        r, cluster = self.renderer, self.cluster
        etcd_path = r.etcd_stack_path()
        assert etcd_path is not None  # the corpus's layout applies the etcd stack
        etcd = r.render_stack(etcd_path, {}).text
        self.upload_files()
        self.stack(cluster.config_items["etcd_stack_name"], etcd, CLM_TAGS_ETCD)
        main = r.render_stack("cluster/cluster.yaml", {}).text
        outputs = self.stack(cluster.local_id, main, {
            f"kubernetes.io/cluster/{cluster.id}": "owned",
            "cluster-lifecycle-controller.zalando.org/main-stack": "true"})
        for pool in r.stack_pools():
            text = r.render_node_pool_stack(pool.name, {"stack_outputs": outputs}).text
            self.upload_files()
            userdata = r.clm.rendered[f"cluster/node-pools/{pool.profile}/userdata.yaml",
                                      pool.name]
            ours, clms = user_data(userdata), go_user_data(userdata)
            assert ours != clms and text.count(ours) == 1  # the only difference from CLM's
            self.stack(node_pool_stack_name(cluster, pool.name, CLM_LAYOUT),
                       text.replace(ours, clms), {
                           f"kubernetes.io/cluster/{cluster.id}": "owned",
                           "kubernetes.io/role/node-pool": "true",
                           "kubernetes.io/node-pool": pool.name, "NodePool": pool.name,
                           "kubernetes.io/node-pool/profile": pool.profile})

    def stack(self, name: str, body: str, tags: dict[str, str]) -> dict[str, str]:
        template_tags = (yamlfiles.load_template(body, name).get("Metadata") or {}).get(
            "Tags") or {}
        merged = {**{k: str(v).lower() if isinstance(v, bool) else str(v)
                     for k, v in template_tags.items()}, **tags}
        source: dict[str, str] = {"TemplateBody": body}
        if len(body) > 51_200:  # CLM uploads a large main stack to its bucket first
            bucket = self.renderer.clm.bucket
            self.session.client("s3").put_object(Bucket=bucket, Key=f"{self.cluster.id}.template",
                                                 Body=body.encode())
            source = {"TemplateURL": f"https://{bucket}.s3.{REGION}.amazonaws.com/"
                                     f"{self.cluster.id}.template"}
        self.cf.create_stack(StackName=name, EnableTerminationProtection=True,
                             Capabilities=["CAPABILITY_NAMED_IAM"], **source,
                             Tags=[{"Key": k, "Value": v} for k, v in merged.items()])
        self.cf.get_waiter("stack_create_complete").wait(
            StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 120})
        [stack] = self.cf.describe_stacks(StackName=name)["Stacks"]
        return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}

    def upload_files(self) -> None:
        """The generated files recorded so far, as CLM's tar.gz (Go's gzip)."""
        s3 = self.session.client("s3")
        account = ClmAccount(self.session)
        for files in self.renderer.clm.generated.values():
            ours = gzip.decompress(files_archive(files.text, files.kms_key, account))
            if files.bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
                s3.create_bucket(Bucket=files.bucket, CreateBucketConfiguration={
                    "LocationConstraint": REGION})
            s3.put_object(Bucket=files.bucket, Key=files.key, Body=go_gzip(ours))


def go_user_data(text: str) -> str:
    return base64.b64encode(go_gzip(text.encode())).decode()


def launch_templates(cluster: Cluster) -> dict[str, int]:
    """Each pool's launch template and its latest version."""
    ec2 = boto3.Session(region_name=REGION).client("ec2")
    found = ec2.describe_launch_templates(Filters=[{"Name": "launch-template-name",
                                                    "Values": [f"{cluster.local_id}-*"]}])
    return {t["LaunchTemplateName"]: t["LatestVersionNumber"] for t in found["LaunchTemplates"]}


def instances(cluster: Cluster, pool: str = "") -> set[str]:
    """The running instances of the cluster's pools (or of one)."""
    asg = boto3.Session(region_name=REGION).client("autoscaling")
    return {i["InstanceId"] for g in all_groups(asg)
            if any(t["Key"] == f"zalando.de/cluster-local-id/{cluster.local_id}"
                   for t in g.get("Tags", []))
            and pool in g["AutoScalingGroupName"]
            for i in g["Instances"] if i["LifecycleState"] == "InService"}


def account_state(cluster: Cluster) -> tuple[object, ...]:
    """What a takeover must leave as it was: buckets, files, templates, stack policies."""
    session = boto3.Session(region_name=REGION)
    s3, cf = session.client("s3"), session.client("cloudformation")
    mine = [s for s in stacks(REGION) if cluster.local_id in s or
            cluster.config_items["etcd_stack_name"] in s or cluster.id.replace(":", "-") in s]
    return (sorted(b["Name"] for b in s3.list_buckets()["Buckets"]),
            sorted((key, s3.head_object(Bucket=bucket(cluster), Key=key)["ETag"])
                   for key in uploaded(cluster)),
            {s: (cf.get_template(StackName=s)["TemplateBody"],
                 cf.get_stack_policy(StackName=s).get("StackPolicyBody"),
                 cf.describe_stacks(StackName=s)["Stacks"][0]["EnableTerminationProtection"])
             for s in mine},
            launch_templates(cluster))


def bucket(cluster: Cluster) -> str:
    return f"cluster-lifecycle-manager-{cluster.infrastructure_account.split(':')[1]}-{REGION}"


def test_a_cluster_clm_made_is_taken_over_without_a_change(takeover: Takeover,
                                                           tmp_path: Path) -> None:
    cluster = takeover.cluster
    AsClm(takeover).create()
    with LocalFleet([cluster], tmp_path / "kubeconfig", layout=CLM_LAYOUT) as fleet:
        kubeconfig = ("--kubeconfig", str(fleet.kubeconfig))
        fleet.kubelets[cluster.id].sync()
        nodes = instances(cluster)
        before = account_state(cluster)

        dry = run_cli(*takeover.cli, "reconcile", *kubeconfig, "--dry-run", "--output", "json")
        after_dry = account_state(cluster)
        applied = run_cli(*takeover.cli, "reconcile", *kubeconfig, "--output", "json")
        after = account_state(cluster), instances(cluster)
        again = run_cli(*takeover.cli, "reconcile", *kubeconfig, "--output", "json")

    assert dry.code == 0, dry.err + dry.out[-3000:]
    assert len(nodes) >= 3 and len(launch_templates(cluster)) == 3
    [planned] = json.loads(dry.out)["items"]
    # No stack change, no node replacement (the manifests are the Kubernetes side's).
    assert [c for c in planned["changes"] if c.startswith("stack ")
            or "replace" in c] == [], planned["changes"]
    assert after_dry == before  # the dry run wrote nothing: no bucket, no file, no policy
    assert applied.code == 0, applied.err + applied.out[-3000:]
    [result] = json.loads(applied.out)["items"]
    assert result["outcome"] == "applied", result
    assert [c for c in result["changes"] if c.startswith("stack ") or "replace" in c] == []
    assert after == (before, nodes)  # same templates and versions, files, instances
    [recorded] = parse_file(takeover.registry(), "clusters.yaml")
    assert recorded.status.current_version == result["version"]
    [second] = json.loads(again.out)["items"]
    assert (second["outcome"], second["version"]) == ("in-sync", result["version"])

    # The control: a new instance type for the on-demand workers. The dry run plans the very
    # replacements the run then makes.
    [record] = parse_file(takeover.registry(), "clusters.yaml")
    changed = dataclasses.replace(record, node_pools=tuple(
        dataclasses.replace(p, instance_types=("m5.xlarge",)) if p.name == "default-worker"
        else p for p in record.node_pools))
    (takeover.koa / "clusters.yaml").write_text(clusters_yaml([cluster_to_dict(changed)]))
    workers = instances(cluster, pool="default-worker")
    with LocalFleet([cluster], tmp_path / "kubeconfig", layout=CLM_LAYOUT) as fleet:
        kubeconfig = ("--kubeconfig", str(fleet.kubeconfig))
        fleet.kubelets[cluster.id].sync()
        dry = run_cli(*takeover.cli, "reconcile", *kubeconfig, "--dry-run", "--output", "json")
        applied = run_cli(*takeover.cli, "reconcile", *kubeconfig, "--output", "json")
        left = instances(cluster)

    [planned] = json.loads(dry.out)["items"]
    [result] = json.loads(applied.out)["items"]
    assert result["outcome"] == "applied", result
    pool_stack = node_pool_stack_name(cluster, "default-worker", CLM_LAYOUT)
    assert [c.split(":")[0] for c in planned["changes"] if c.startswith("stack ")] == [
        f"stack {pool_stack}"]
    assert [c for c in planned["changes"] if c.startswith("node pool default-worker: would")] \
        == [f"node pool default-worker: would replace {len(workers)} node(s) in 3 wave(s)"]
    assert [c for c in result["changes"] if "replaced" in c] == [
        f"node pool default-worker: replaced {len(workers)} node(s) in 3 wave(s)"]
    assert workers.isdisjoint(left) and nodes - workers <= left
