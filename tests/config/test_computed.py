"""The values CLM computes before rendering (`clmgit.config.computed`), through the project's
renderer: on an in-memory account, and every AWS path once on moto."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import tarfile
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from clmgit_sandbox.clmaccount import INSTANCE_TYPES, MemoryClmAccount, certificate
from clmgit_sandbox.doubles import StaticConfigSource

from clmgit.accounts import ClmAccount as ClmAccountPort
from clmgit.accounts import Subnet, Vpc
from clmgit.adapters.aws.clmaccount import ClmAccount
from clmgit.config.computed import (
    ClmInstance,
    PlaceholderAccount,
    Requirement,
    Taint,
    best_certificate,
    clm_pool,
    files_archive,
    select_subnets,
    synthetic_instance,
)
from clmgit.config.gofmt import GoPointer, NilSlice
from clmgit.config.render import ClusterRenderer, render_cluster
from clmgit.config.source import ConfigTree
from clmgit.config.values import placeholder_values
from clmgit.errors import ConfigError, TemplateError
from clmgit.model import NodePool
from tests.helpers.aws import all_objects
from tests.helpers.certs import self_signed
from tests.helpers.configrepo import cluster
from tests.helpers.gojudge import go_gzip

POOLS = (
    NodePool("master", "master-default", ("m5.large",), "none", 1, 2, {}),
    NodePool("spot", "worker-default", ("m5.xlarge", "m6g.large"), "spot", 0, 3,
             {"taints": "dedicated=ml:NoSchedule,broken,k:Wrong",
              "availability_zones": "eu-central-1b"}),
    NodePool("karp", "worker-karpenter", ("default-for-karpenter",), "none", 0, 0,
             {"requirements": "- key: kubernetes.io/arch\n  operator: In\n  values: [arm64]\n"}),
)
FILES = ("files:\n"
         "- path: /etc/kubernetes/ca.pem\n"
         "  data: {{ ('ca of ' ~ Cluster.LocalID) | base64 }}\n"
         "  encrypted: false\n"
         "  permissions: 0644\n"
         "- path: /etc/kubernetes/key.pem\n"
         "  data: {{ Cluster.ConfigItems.secret_key | base64 }}\n"
         "  encrypted: true\n"
         "  permissions: 0600\n")
TREE = {
    "cluster/config-defaults.yaml": (
        "etcd_instance_type: m5.large\n"
        "region_default: '{{ Cluster.Region }}-{{ Cluster.ConfigItems[\"nothing\"] }}'\n"),
    "cluster/stack.yaml": (
        "Description: '{{ Cluster.ConfigItems.vpc_id }} {{ Values.subnets[\"*\"] }}'\n"
        "Metadata:\n"
        "  missing: '{{ Cluster.ConfigItems[\"not_set\"] }}'\n"
        "  secret: '{{ Cluster.ConfigItems.secret_key }}'\n"
        "  etcd: '{{ Values.etcd_kms_key_arn }} {{ Values.S3GeneratedFilesPath }}'\n"
        "  cert: '{{ Values.load_balancer_certificate }}'\n"
        "  ipv6: '{{ Values.vpc_ipv6_cidrs | join(\",\") }} {{ Values.subnet_ipv6_cidrs }}'\n"
        "Resources: {Vpc: {Type: 'AWS::EC2::VPC'}}\n"),
    "cluster/etcd/stack.yaml": "Resources: {}\n",
    "cluster/etcd/files.yaml": "files: []\n",
    "cluster/node-pools/master-default/stack.yaml": (
        "Description: '{{ NodePool.Name }} {{ NodePool.IsMaster }} {{ Values.UserData }}'\n"),
    "cluster/node-pools/master-default/userdata.yaml": (
        "#cloud-config\n"
        "files: {{ Values.S3GeneratedFilesPath }}\n"
        "memory: {{ Values.InstanceInfo.MemoryFraction(50) }}\n"),
    "cluster/node-pools/master-default/files.yaml": FILES,
    "cluster/node-pools/worker-default/stack.yaml": (
        "Description: '{{ NodePool.IsSpot }} {{ NodePool.Taints | length }} "
        "{{ Values.InstanceInfo.InstanceType }} {{ Values.InstanceInfo.VCPU }} "
        "{{ Values.InstanceInfo.Architecture }} {{ Values.availability_zones | join(\",\") }} "
        "{{ Values.subnets[\"*\"] }} {{ Values.supports_t2_unlimited }} "
        "{{ NodePool.ConfigItems.secret_key }} {{ NodePool.ConfigItems[\"vpc_id\"] }}.'\n"),
    "cluster/node-pools/worker-default/userdata.yaml": "worker {{ NodePool.Name }}\n",
    "cluster/node-pools/worker-karpenter/stack.yaml": (
        "Description: '{{ NodePool.KarpenterRequirements[0].Values[0] }} "
        "{{ NodePool.KarpenterInstanceTypeStrategy }} {{ Values.InstanceInfo is defined }}'\n"
        "Metadata:\n"
        "  userdata: {{ Values.UserData | tojson }}\n"),
    "cluster/node-pools/worker-karpenter/userdata.yaml": "karpenter {{ NodePool.Name }}\n",
}
SECRET = "the-secret-key-value"
OUTPUTS = {"MasterFilesEncryptionKey": "arn:aws:kms:eu-central-1:123456789012:key/master",
           "WorkerFilesEncryptionKey": "arn:aws:kms:eu-central-1:123456789012:key/worker"}


def memory_account(**overrides: Any) -> MemoryClmAccount:
    fields: dict[str, Any] = {
        "vpcs": (Vpc("vpc-1", "10.10.0.0/16", ("2a05:d014::/56",)),
                 Vpc("vpc-default", "172.31.0.0/16")),
        "default_vpc_id": "vpc-1",
        "subnet_list": (
            Subnet("subnet-a2", "eu-central-1a", {"kubernetes.io/role/node": ""},
                   ("2a05:d014::/64",)),
            Subnet("subnet-a1", "eu-central-1a"),
            Subnet("subnet-b1", "eu-central-1b", {"kubernetes.io/role/elb": ""}),
            Subnet("subnet-c1", "eu-central-1c"),
            Subnet("subnet-custom", "eu-central-1c", {"zalando.org/custom-subnet": "x"}),
        ),
        "keys": {"alias/etcd-cluster": "arn:aws:kms:eu-central-1:123456789012:key/etcd"},
        "certificate_list": (
            certificate("arn:cert/wild", "*.example.org"),
            certificate("arn:cert/exact-old", "kube-1.example.org", days=30),
            certificate("arn:cert/exact-new", "other.example.org", "kube-1.example.org"),
        ),
    }
    fields.update(overrides)
    return MemoryClmAccount(**fields)


def encrypted(account: MemoryClmAccount, text: str) -> str:
    return "aws:kms:" + base64.b64encode(account.encrypt("alias/items", text.encode(),
                                                         what="test")).decode()


def renderer(account: ClmAccountPort | None, **items: str) -> ClusterRenderer:
    tree = ConfigTree("sha1", {p: t.encode() for p, t in TREE.items()})
    return ClusterRenderer(tree, cluster(node_pools=POOLS, config_items=items), account=account)


def test_pool_methods_are_attributes_as_clm_computes_them() -> None:
    spot, karp = clm_pool(POOLS[1]), clm_pool(POOLS[2])
    assert (spot["IsSpot"], spot["IsMaster"], spot["IsKarpenter"]) == (True, False, False)
    assert clm_pool(NodePool("x", "master-x", discount_strategy="spot_max_price"))["IsSpot"]
    assert clm_pool(POOLS[0])["IsMaster"] and karp["IsKarpenter"]
    # CLM's ParseTaint takes a key alone (`broken`) and drops an unknown effect (`k:Wrong`)
    assert spot["Taints"] == [Taint("dedicated", "ml", "NoSchedule"), Taint("broken", "", "")]
    assert clm_pool(POOLS[0])["Taints"] == []  # a nil slice, read as an empty one
    assert karp["KarpenterRequirements"] == [
        Requirement(GoPointer("kubernetes.io/arch"), GoPointer("In"), ["arm64"])]
    assert karp["KarpenterInstanceTypeStrategy"] == "default-for-karpenter"
    assert spot["KarpenterInstanceTypeStrategy"] == "custom"


@pytest.mark.parametrize(("items", "nil"), [
    ({}, True), ({"taints": "a=b"}, True), ({"taints": "a=b=c:NoSchedule,x:Bad"}, True),
    ({"taints": ""}, False), ({"requirements": ""}, True),
    ({"requirements": "{a: 1}"}, True), ({"requirements": "- key: [x"}, True),
    ({"requirements": "[]"}, False)])
def test_taints_and_requirements_are_nil_where_clms_are(items: dict[str, str], nil: bool,
                                                         ) -> None:
    """CLM's methods return a nil slice without the item, without a valid taint (an empty text
    is a valid one, with an empty key), or when the requirements are no YAML list; `[]` is an
    empty slice, not a nil one."""
    pool = clm_pool(NodePool("p", "worker-karpenter", ("m5.large",), "none", 1, 1, items))
    key = "Taints" if "taints" in items or not items else "KarpenterRequirements"
    assert isinstance(pool[key], NilSlice) is nil
    assert pool[key] == [] or not nil
    if not items:
        assert isinstance(pool["KarpenterRequirements"], NilSlice)


def test_instance_info_of_several_types_is_the_least_of_each() -> None:
    info = synthetic_instance([INSTANCE_TYPES["m5.xlarge"], INSTANCE_TYPES["c5d.2xlarge"],
                               INSTANCE_TYPES["m6g.large"]])
    assert (info.InstanceType, info.VCPU, info.Memory, info.Architecture) == (
        "<multiple>", 2, 8192 * 2**20, "amd64")
    assert info.InstanceStorageDevices == 0
    disk = ClmInstance.of(INSTANCE_TYPES["c5d.2xlarge"])
    assert disk.AvailableStorage(0.9, 50, 0.5) == 180 * 10**9  # instance storage, scaled
    assert info.AvailableStorage(0.9, 50 * 2**30, 0.8) == int(50 * 2**30 * 0.8)  # root volume
    assert disk.MemoryFraction(25) == 4096 * 2**20
    with pytest.raises(ConfigError):
        synthetic_instance([])


def test_subnets_are_chosen_per_zone_as_clm_does() -> None:
    subnets = memory_account().subnet_list
    nodes = select_subnets(subnets, "kubernetes.io/role/node")
    # the tagged subnet wins in its zone; otherwise the first by id
    assert nodes.by_zone() == {"eu-central-1a": "subnet-a2", "eu-central-1b": "subnet-b1",
                               "eu-central-1c": "subnet-c1",
                               "*": "subnet-a2,subnet-b1,subnet-c1"}
    assert select_subnets(subnets, "kubernetes.io/role/elb").by_zone()["eu-central-1a"] == (
        "subnet-a1")
    assert nodes.restrict(["eu-central-1b", "eu-west-1a"]).by_zone() == {
        "eu-central-1b": "subnet-b1", "*": "subnet-b1"}
    assert select_subnets((), "x").by_zone() == {}


def test_the_best_certificate_is_the_longest_match_then_the_latest() -> None:
    certs = memory_account().certificate_list
    assert best_certificate(certs, "kube-1.example.org") == "arn:cert/exact-new"
    assert best_certificate(certs, "api.example.org") == "arn:cert/wild"
    assert best_certificate(certs, "a.b.example.org") == ""


def test_the_renderer_gives_clms_computed_values() -> None:
    account = memory_account()
    r = renderer(account, secret_key=encrypted(account, SECRET))
    stack = r.render_stack("cluster/stack.yaml").text
    # vpc_id and subnets discovered (custom subnets left out), the secret decrypted
    assert "Description: 'vpc-1 subnet-a2,subnet-b1,subnet-c1'" in stack
    assert "missing: ''" in stack
    assert f"secret: '{SECRET}'" in stack
    assert r.clm.secrets == {SECRET}
    masked = r.clm.masker()(stack)
    assert SECRET not in masked and "secret: '***'" in masked
    etcd_files = hashlib.sha512(b"files: []\n").hexdigest()
    assert ("etcd: 'arn:aws:kms:eu-central-1:123456789012:key/etcd s3://cluster-lifecycle-"
            f"manager-123456789012-eu-central-1/kube-1/etcd/{etcd_files}.userdata'") in stack
    assert "cert: 'arn:cert/exact-new'" in stack
    assert "ipv6: '2a05:d014::/56 2a05:d014::/64'" in stack
    # `index` of a missing item is "" in the defaults too
    assert r.cluster.config_items["region_default"] == "eu-central-1-"


def test_node_pools_get_instance_info_zones_files_and_user_data() -> None:
    account = memory_account()
    r = renderer(account, secret_key=encrypted(account, SECRET))
    values = {"stack_outputs": OUTPUTS}
    master = r.render_node_pool_stack("master", values).text
    user_data = master.split()[-1].rstrip("'")
    text = gzip.decompress(base64.b64decode(user_data)).decode()
    files_text = r._render("cluster/node-pools/master-default/files.yaml", {
        **r._variables(values), "NodePool": r.clm.pool_data(POOLS[0])})
    path = ("s3://cluster-lifecycle-manager-123456789012-eu-central-1/kube-1/master/"
            f"{hashlib.sha512(files_text.encode()).hexdigest()}.userdata")
    assert text == f"#cloud-config\nfiles: {path}\nmemory: {8192 * 2**20 // 2}\n"
    assert master.startswith("Description: 'master true H4sI")

    spot = r.render_node_pool_stack("spot", values).text
    # two types: the lesser of each; zones restricted to the pool's; inherited secret decrypted,
    # vpc_id discovered after pools inherit (as in CLM), so not theirs
    assert spot == (f"Description: 'true 2 <multiple> 2 amd64 eu-central-1b subnet-b1 false "
                    f"{SECRET} .'\n")

    karp = r.render_node_pool_stack("karp", values).text
    assert "Description: 'arm64 default-for-karpenter false'" in karp
    assert 'userdata: "karpenter karp\\n"' in karp  # Karpenter takes user data as text
    assert account.calls["put_object"] == 0  # nothing uploaded while rendering


def test_generated_files_are_uploaded_only_when_published() -> None:
    account = memory_account()
    r = renderer(account, secret_key=encrypted(account, SECRET))
    r.render_node_pool_stack("master", {"stack_outputs": OUTPUTS})
    (etcd, master) = sorted(r.clm.generated.values(), key=lambda f: f.key)
    assert account.objects == {}
    assert sorted(r.clm.publish()) == sorted([etcd.s3_path, master.s3_path])
    body = account.objects[master.bucket, master.key]
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
        members = {m.name: (m.mode, tar.extractfile(m).read()) for m in tar.getmembers()}  # type: ignore[union-attr]  # files
    assert members["/etc/kubernetes/ca.pem"] == (0o644, b"ca of kube-1")
    mode, blob = members["/etc/kubernetes/key.pem.enc"]
    assert mode == 0o600
    assert account.decrypt(blob, what="t") == SECRET.encode()
    assert blob.startswith(b"memory-kms:" + OUTPUTS["MasterFilesEncryptionKey"].encode())


def test_a_render_before_the_stacks_names_files_and_uploads_none() -> None:
    """The engine renders everything once with placeholder outputs (no KMS key yet) before it
    changes anything; those files are not published, the pool's render with its stack's
    outputs is."""
    account = memory_account()
    r = renderer(account, secret_key=encrypted(account, SECRET))
    r.render_all({})  # placeholders
    assert sorted(f.key.split("/")[1] for f in r.clm.generated.values()) == ["etcd"]
    r.clm.publish()  # no KMS key needed: nothing of the placeholder render is uploaded

    r.render_node_pool_stack("master", {"stack_outputs": OUTPUTS})

    assert sorted(f.key.split("/")[1] for f in r.clm.generated.values()) == ["etcd", "master"]
    r.clm.publish()
    assert sorted(key.split("/")[1] for _, key in account.objects) == ["etcd", "master"]


def test_files_to_encrypt_need_the_key() -> None:
    with pytest.raises(ConfigError, match="KMS key"):
        files_archive("files:\n- {path: /a, data: YQ==, encrypted: true}\n", "",
                      memory_account())
    with pytest.raises(ConfigError, match="path, data"):
        files_archive("files:\n- {path: /a, mode: 1}\n", "k", memory_account())


def test_answers_are_asked_once_per_session() -> None:
    account = memory_account()
    r = renderer(account, secret_key=encrypted(account, SECRET))
    for _ in range(2):
        r.render_all({"stack_outputs": OUTPUTS})
    assert account.calls["subnets"] == 1 and account.calls["certificates"] == 1
    assert account.calls["decrypt"] == 1 and account.calls["key_arn"] == 1


def test_a_missing_item_read_as_a_field_fails_as_in_clm() -> None:
    tree = {**TREE, "cluster/stack.yaml": "x: {{ Cluster.ConfigItems.not_set }}\n"}
    source = StaticConfigSource({"s": tree})
    with pytest.raises(TemplateError, match="not_set"):
        render_cluster(source, "s", cluster(node_pools=POOLS), account=memory_account())


def test_offline_the_network_comes_from_the_placeholders() -> None:
    r = renderer(None, secret_key="aws:kms:AAAA")
    stack = r.render_stack("cluster/stack.yaml").text
    assert "Description: 'vpc-placeholder subnet-placeholder-eu-central-1a," in stack
    assert "secret: 'aws:kms:AAAA'" in stack  # nothing to decrypt with
    values = r.clm.pool_values(POOLS[1], placeholder_values(r.cluster), tree=(),
                               render=r._render_clm)
    assert (values["availability_zones"], values["subnets"]) == (
        ["eu-central-1b"], {"eu-central-1b": "subnet-placeholder-eu-central-1b",
                            "*": "subnet-placeholder-eu-central-1b"})
    with pytest.raises(TemplateError, match="InstanceInfo asks AWS"):
        r.render_node_pool_stack("spot")
    assert isinstance(r.clm.account, PlaceholderAccount)  # never None
    with pytest.raises(ConfigError, match="can only be uploaded with an AWS account"):
        r.clm.publish()


# -- every AWS path once, on moto ------------------------------------------------------------


def _empty_bucket(s3: Any, bucket: str) -> None:
    """Files are stored under their content's hash, and moto's state lives for the session: a
    test that published the same files before (in any order) must not make "nothing uploaded
    while rendering" pass or fail by itself."""
    try:
        pages = list(s3.get_paginator("list_objects_v2").paginate(Bucket=bucket))
    except s3.exceptions.NoSuchBucket:
        return
    for page in pages:
        for obj in page.get("Contents", ()):
            s3.delete_object(Bucket=bucket, Key=obj["Key"])


@pytest.fixture
def moto_account(moto_endpoint: str) -> Iterator[dict[str, Any]]:
    """A VPC with tagged subnets (one with IPv6), KMS keys, an ACM certificate, on moto."""
    session = boto3.Session(region_name="eu-central-1")
    ec2, kms, acm = (session.client(s) for s in ("ec2", "kms", "acm"))
    vpc = ec2.create_vpc(CidrBlock="10.77.0.0/16", AmazonProvidedIpv6CidrBlock=True)["Vpc"]
    vpc_id = vpc["VpcId"]
    ipv6 = ec2.describe_vpcs(VpcIds=[vpc_id])["Vpcs"][0]["Ipv6CidrBlockAssociationSet"][0][
        "Ipv6CidrBlock"]
    made = {}
    for zone, cidr, tags in (("a", "10.77.1.0/24", {"kubernetes.io/role/node": ""}),
                             ("a", "10.77.2.0/24", {}),
                             ("b", "10.77.3.0/24", {}),
                             ("c", "10.77.4.0/24", {"zalando.org/custom-subnet": "x"})):
        subnet = ec2.create_subnet(VpcId=vpc_id, CidrBlock=cidr,
                                   AvailabilityZone=f"eu-central-1{zone}")["Subnet"]
        if tags:
            ec2.create_tags(Resources=[subnet["SubnetId"]],
                            Tags=[{"Key": k, "Value": v} for k, v in tags.items()])
        made[cidr] = subnet["SubnetId"]
    etcd_key = kms.create_key()["KeyMetadata"]
    alias = "alias/etcd-cluster"
    try:
        kms.create_alias(AliasName=alias, TargetKeyId=etcd_key["KeyId"])
    except kms.exceptions.AlreadyExistsException:
        kms.update_alias(AliasName=alias, TargetKeyId=etcd_key["KeyId"])
    files_key = kms.create_key()["KeyMetadata"]["Arn"]
    secret = "aws:kms:" + base64.b64encode(kms.encrypt(
        KeyId=files_key, Plaintext=SECRET.encode())["CiphertextBlob"]).decode()
    cert_arn = acm.import_certificate(**self_signed("kube-1.example.org"))["CertificateArn"]
    _empty_bucket(session.client("s3"), "cluster-lifecycle-manager-123456789012-eu-central-1")
    yield {"session": session, "vpc_id": vpc_id, "ipv6": ipv6, "subnets": made,
           "etcd_key": etcd_key["Arn"], "files_key": files_key, "secret": secret,
           "cert": cert_arn}
    # moto is shared by the session: another test's certificate for the same host, made within
    # the same second (X.509 times are whole seconds), would tie with this one's expiry.
    acm.delete_certificate(CertificateArn=cert_arn)


def test_every_computed_value_on_moto(moto_account: dict[str, Any]) -> None:
    m = moto_account
    account = ClmAccount(m["session"])
    items = {"vpc_id": m["vpc_id"], "secret_key": m["secret"]}
    r = renderer(account, **items)
    stack = r.render_stack("cluster/stack.yaml").text
    node_a, other_a, b = (m["subnets"][c] for c in ("10.77.1.0/24", "10.77.2.0/24",
                                                     "10.77.3.0/24"))
    assert other_a != node_a
    assert f"Description: '{m['vpc_id']} {node_a},{b}'" in stack  # custom subnet left out
    assert f"secret: '{SECRET}'" in stack and r.clm.secrets == {SECRET}
    assert f"etcd: '{m['etcd_key']} s3://cluster-lifecycle-manager-123456789012-" in stack
    assert f"cert: '{m['cert']}'" in stack
    assert f"ipv6: '{m['ipv6']} " in stack

    outputs = {"MasterFilesEncryptionKey": m["files_key"], "WorkerFilesEncryptionKey": "x"}
    master = r.render_node_pool_stack("master", {"stack_outputs": outputs}).text
    user_data = gzip.decompress(base64.b64decode(master.split()[-1].rstrip("'"))).decode()
    assert f"memory: {8192 * 2**20 // 2}\n" in user_data  # m5.large, as EC2 describes it
    spot = r.render_node_pool_stack("spot", {"stack_outputs": outputs}).text
    assert f"<multiple> 2 amd64 eu-central-1b {b} false" in spot

    s3 = m["session"].client("s3")
    master_files = next(f for f in r.clm.generated.values() if "/master/" in f.key)
    with pytest.raises(s3.exceptions.ClientError):  # nothing uploaded while rendering
        s3.head_object(Bucket=master_files.bucket, Key=master_files.key)
    r.clm.publish()
    body = s3.get_object(Bucket=master_files.bucket, Key=master_files.key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
        blob = tar.extractfile("/etc/kubernetes/key.pem.enc").read()  # type: ignore[union-attr]  # a file
    plain = m["session"].client("kms").decrypt(CiphertextBlob=blob)["Plaintext"]
    assert plain == SECRET.encode()


def test_files_clm_uploaded_with_the_same_content_are_not_uploaded_again_on_moto(
        moto_account: dict[str, Any]) -> None:
    m = moto_account
    outputs = {"MasterFilesEncryptionKey": m["files_key"], "WorkerFilesEncryptionKey": "x"}

    def published() -> list[str]:
        """A fresh render session (a new run) of the master pool, published."""
        r = renderer(ClmAccount(m["session"]), vpc_id=m["vpc_id"], secret_key=m["secret"])
        r.render_node_pool_stack("master", {"stack_outputs": outputs})
        return sorted(path.split("/")[-2] for path in r.clm.publish())

    published()
    s3 = m["session"].client("s3")
    [key] = [o["Key"] for o in all_objects(s3, BUCKET) if "/master/" in o["Key"]]
    # As CLM left it: the same tar, gzipped by Go, the secret encrypted anew by KMS.
    with tarfile.open(fileobj=io.BytesIO(s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()),
                      mode="r:gz") as tar:
        files = [(member, tar.extractfile(member).read()) for member in tar.getmembers()]  # type: ignore[union-attr]  # files
    kms = m["session"].client("kms")
    plain = kms.decrypt(CiphertextBlob=files[1][1])["Plaintext"]
    files[1] = (files[1][0], kms.encrypt(KeyId=m["files_key"], Plaintext=plain)["CiphertextBlob"])
    clms = go_gzip(tar_of(files))
    s3.put_object(Bucket=BUCKET, Key=key, Body=clms)

    assert published() == []
    assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == clms

    # An archive at the key with other content is replaced.
    s3.put_object(Bucket=BUCKET, Key=key, Body=go_gzip(tar_of(files[:1])))
    assert published() == ["master"]


BUCKET = "cluster-lifecycle-manager-123456789012-eu-central-1"


def tar_of(files: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for info, data in files:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_the_default_vpc_is_found_on_moto(moto_account: dict[str, Any]) -> None:
    ec2 = moto_account["session"].client("ec2")
    default = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]
    vpc = ClmAccount(moto_account["session"]).default_vpc()
    assert (vpc.id, vpc.cidr) == (default["VpcId"], default["CidrBlock"])


def test_index_of_a_missing_key_is_gos_zero_value() -> None:
    """`index` of a missing key: "" in config items, nil in `dict`s and `.Values`; read as a
    field, an error (CLM's missingkey=error). `NodePool` outside node pools: a nil pointer."""
    tree = {**TREE, "cluster/stack.yaml": (
        "a: '{{ Cluster.ConfigItems[\"none\"] }}'\n"
        "b: {{ dict(\"x\", 1)[\"y\"] is none }}\n"
        "c: {{ Values[\"none\"] is none }}\n"
        "d: {{ NodePool }} {{ not NodePool }}\n")}
    r = ClusterRenderer(ConfigTree("s", {p: t.encode() for p, t in tree.items()}),
                        cluster(node_pools=POOLS), account=memory_account())
    assert r.render_stack("cluster/stack.yaml").text == "a: ''\nb: true\nc: true\nd: <nil> true\n"
    tree["cluster/stack.yaml"] = "b: {{ dict(\"x\", 1).y }}\n"
    r = ClusterRenderer(ConfigTree("t", {p: t.encode() for p, t in tree.items()}),
                        cluster(node_pools=POOLS), account=memory_account())
    with pytest.raises(TemplateError, match="has no attribute 'y'"):
        r.render_stack("cluster/stack.yaml")
