"""CLM's template function library: each function against vectors from CLM's own tests and
behaviour (provisioner/template_test.go), called directly and through the Jinja environment;
the EC2-asking ones on moto."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json

import boto3
import pytest
from clmgit_sandbox.aws import ACCOUNT, publish_image
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from clmgit.adapters.aws.clmaccount import ClmAccount
from clmgit.config.clmfuncs import NAMES, GoMap, aws_session, clm_functions
from clmgit.config.computed import ConfigItems
from clmgit.config.helpers import HelperError
from clmgit.config.templates import make_environment
from clmgit.errors import ApplyError

F = clm_functions()


def render(source: str, **variables: object) -> str:
    return make_environment().from_string(source).render(**variables)


def test_the_table_has_all_of_clms_functions() -> None:
    # the 42 names of CLM's FuncMap (manifestHash comes from the renderer)
    assert len(NAMES) == 42
    assert set(F) == NAMES - {"manifestHash"}
    assert "manifestHash" in clm_functions(manifest_hash=lambda name: name)
    env = make_environment()
    assert NAMES <= set(env.globals)


@pytest.mark.parametrize(("template", "expected"), [
    ('{{ index(items, "a") }}|{{ index(items, "missing") }}', "1|"),  # config items: ""
    ('{{ index(go, "missing") is none }}', "true"),  # map[string]interface{}: nil
    ('{{ index(strings, "missing") }}|{{ index(mixed, "missing") is none }}', "|true"),
    ('{{ index(nested, "a", 1) }}|{{ index(nested, "b", "c") }}', "y|z"),
    ('{{ index(nested.a, 0) }}{{ index("hi", 0) }}', "x104"),  # a string's element is a byte
    ('{{ index("hé", 2) }}', "169"),  # é is two bytes
])
def test_index_gives_gos_zero_value_for_a_missing_key(template: str, expected: str) -> None:
    out = render(template, items=ConfigItems(a="1"), go=GoMap(a=[]), strings={"a": "b"},
                 mixed={"a": 1}, nested={"a": ["x", "y"], "b": {"c": "z"}})
    assert out == expected


@pytest.mark.parametrize(("template", "error"), [
    ('{{ index(list, 2) }}', "index: index out of range: 2"),
    ('{{ index(list, "a") }}', "index: cannot index slice/array with type str"),
    ('{{ index(none, "a") }}', "index: cannot index nil"),
])
def test_index_refuses_what_go_refuses(template: str, error: str) -> None:
    with pytest.raises(HelperError, match=error):
        render(template, list=["a", "b"])


@pytest.mark.parametrize(("data", "expected"), [("", ""), ("foo", "0=foo"),
                                                ("foo,bar", "0=foo1=bar")])
def test_split_gives_no_parts_for_an_empty_string(data: str, expected: str) -> None:
    out = render("{% for e in split(data, ',') %}{{ loop.index0 }}={{ e }}{% endfor %}", data=data)
    assert out == expected
    parts = len(expected.split("=")) - 1
    assert render("{{ data | split(',') | length }}", data=data) == str(parts)


def test_join_and_indent_follow_sprig_and_jinja_keeps_its_filters() -> None:
    assert F["join"](",", ["a", None, True, 2, 0.5]) == "a,true,2,0.5"
    assert F["join"]("-", None) == ""
    assert F["indent"](2, "a\nb") == "  a\n  b"
    assert render("{{ ['a', 'b'] | join('+') }}|{{ 'x\ny' | indent(2) }}") == "a+b|x\n  y"


def test_booleans_print_as_go_prints_them() -> None:
    assert render("{{ t }} {{ f }} {{ hasPrefix('abc', 'ab') }}", t=True, f=False) == \
        "true false true"


def test_base64_decode_keeps_bytes_that_are_not_utf8() -> None:
    raw = bytes(range(256))
    encoded = base64.b64encode(raw).decode()
    decoded = F["base64Decode"](encoded)
    assert F["base64"](decoded) == encoded
    assert F["sha256"](decoded) == hashlib.sha256(raw).hexdigest()
    assert F["base64Decode"]("Zm9vYmFy") == "foobar"
    with pytest.raises(HelperError):
        F["base64Decode"]("not base64!")


def test_accounts_and_ids() -> None:
    assert F["getAWSAccountID"]("aws:123456789012") == "123456789012"
    assert F["accountID"]("aws:123") == "123"
    with pytest.raises(HelperError):
        F["accountID"]("aws:1:2")
    assert F["awsValidID"]("aws:123:eu-central-1:kube-1") == "aws__123__eu-central-1__kube-1"
    assert F["mountUnitName"]("/var/lib/docker") == "var-lib-docker"
    with pytest.raises(HelperError):
        F["mountUnitName"]("var/lib")


def test_collections() -> None:
    assert F["dict"]("a", 1, "b", [2]) == {"a": 1, "b": [2]}
    for bad in [(), ("a",), (1, 2), ("a", 1, "a", 2)]:
        with pytest.raises(HelperError):
            F["dict"](*bad)
    assert F["list"](1, "a") == [1, "a"]
    assert F["append"](["a"], "b", "c") == ["a", "b", "c"]
    assert render("{{ dict('k', 'v').k }}{{ dict(a=1).a }}") == "v1"


def test_prefixes_and_indexed_lists() -> None:
    assert F["hasPrefix"]("foobar", "foo") and not F["hasPrefix"]("foobar", "bar")
    assert F["hasSuffix"]("foobar", "bar") and not F["hasSuffix"]("foobar", "foo")
    assert F["indexedList"]("", 3) == ",,"
    assert F["indexedList"]("foo$.bar$.baz$", 3) == "foo0.bar0.baz0,foo1.bar1.baz1,foo2.bar2.baz2"
    assert F["indexedList"]("x$", 0) == ""
    with pytest.raises(HelperError):
        F["indexedList"]("x$", -42)


def test_port_and_ingress_ranges() -> None:
    assert [(r.FromPort, r.ToPort) for r in F["portRanges"]("10-20,30-30")] == [(10, 20), (30, 30)]
    for bad in ["10", "20-10", "a-b", "0-65536"]:
        with pytest.raises(HelperError):
            F["portRanges"](bad)
    ranges = F["sgIngressRanges"]("10.0.0.0/8:4180-4181,0.0.0.0/0:4190,udp:0.0.0.0/0:53")
    assert [(r.CIDR, r.FromPort, r.ToPort, r.Protocol) for r in ranges] == [
        ("10.0.0.0/8", 4180, 4181, "tcp"), ("0.0.0.0/0", 4190, 4190, "tcp"),
        ("0.0.0.0/0", 53, 53, "udp")]
    assert F["sgIngressRanges"]("10.1.2.3/8:80")[0].CIDR == "10.0.0.0/8"
    for bad in ["icmp:0.0.0.0/0:80", "0.0.0.0:80", "1:2:3:4", "0.0.0.0/0:1-2-3"]:
        with pytest.raises(HelperError):
            F["sgIngressRanges"](bad)
    assert render("{% for r in sgIngressRanges('0.0.0.0/0:53') %}{{ r.FromPort }}{% endfor %}") \
        == "53"


def test_hosts_and_addresses() -> None:
    hp = F["splitHostPort"]("example.org:443")
    assert (hp.Host, hp.Port) == ("example.org", "443")
    assert F["splitHostPort"]("[::1]:80").Host == "::1"
    with pytest.raises(HelperError):
        F["splitHostPort"]("example.org")
    assert F["extractEndpointHosts"]("etcd-server.etcd.example.org:2379") == \
        ["etcd-server.etcd.example.org"]
    assert F["extractEndpointHosts"](
        "http://etcd-server.etcd.example.org:2379,zalan.do:2479") == \
        ["etcd-server.etcd.example.org", "zalan.do"]
    assert F["extractEndpointHosts"](
        "http://etcd.example.org:2379,https://etcd.example.org:2479") == ["etcd.example.org"]
    assert F["nthAddressFromCIDR"]("10.0.0.0/16", 10) == "10.0.0.10"
    assert F["nthAddressFromCIDR"]("10.2.3.4/16", 1) == "10.2.0.1"
    assert F["nthAddressFromCIDR"]("fd00:10::/64", 10) == "fd00:10::a"


@pytest.mark.parametrize(("vpc", "subnets"), [
    ("172.31.0.0/16", ["172.31.64.0/28", "172.31.64.16/28", "172.31.64.32/28"]),
    ("10.153.192.0/19", ["10.153.200.0/28", "10.153.200.16/28", "10.153.200.32/28"]),
    ("10.149.64.0/19", ["10.149.72.0/28", "10.149.72.16/28", "10.149.72.32/28"]),
])
def test_stups_nat_subnets(vpc: str, subnets: list[str]) -> None:
    assert F["stupsNATSubnets"](vpc) == subnets


@pytest.mark.parametrize("vpc", ["172.31.0.0/25", "2001::/19", "example"])
def test_stups_nat_subnets_refuses(vpc: str) -> None:
    with pytest.raises(HelperError):
        F["stupsNATSubnets"](vpc)


def test_node_cidr_sizes() -> None:
    assert F["nodeCIDRMaxNodesPodCIDR"](16, 24, 0) == 256
    assert F["nodeCIDRMaxNodesPodCIDR"](14, 24, 10) == 1014
    assert F["nodeCIDRMaxNodes"](25, 10) == 502
    assert F["nodeCIDRMaxPods"](24, 0) == 110
    assert F["nodeCIDRMaxPods"](25, 8) == 72
    assert F["nodeCIDRMaxPods"](28, 0) == 8
    for bad in [(13, 24, 0), (16, 23, 0), (16, 29, 0)]:
        with pytest.raises(HelperError):
            F["nodeCIDRMaxNodesPodCIDR"](*bad)
    with pytest.raises(HelperError):
        F["nodeCIDRMaxPods"](29, 0)


@pytest.mark.parametrize(("size", "scale", "expected"), [("1Ki", 1, "1KB"),
                                                        ("1Gi", 0.5, "524288KB"),
                                                        ("4Gi", 0.8, "3355444KB")])
def test_kubernetes_size_to_kilobytes(size: str, scale: float, expected: str) -> None:
    assert F["kubernetesSizeToKiloBytes"](size, scale) == expected


@pytest.mark.parametrize(("size", "expected"), [
    ("1.5k", "2KB"), ("0.5k", "1KB"), ("1e3", "1KB"), ("10000Gi", "10485760000KB"),
    ("10Ti", "10737418240KB"), ("-1Gi", "-1048576KB"), ("00010", "1KB"), ("0", "0KB")])
def test_kubernetes_size_to_kilobytes_takes_what_kubernetes_holds_as_int64(
        size: str, expected: str) -> None:
    assert F["kubernetesSizeToKiloBytes"](size, 1.0) == expected


@pytest.mark.parametrize("size", ["1.5Gi", "1000m", "1.0", "0.0", "1E-2", "100000Gi", "100Ti",
                                  "1Pi", "1Ei", "1234567890123456789"])
def test_kubernetes_size_to_kilobytes_fails_where_clms_as_int64_does(size: str) -> None:
    """Kubernetes keeps these as a decimal (a binary fraction, a negative scale, more digits
    than its int64 fast path takes), and CLM's `AsInt64` then says no, even for whole values."""
    with pytest.raises(HelperError, match=f"unexpected size for quantity: {size}"):
        F["kubernetesSizeToKiloBytes"](size, 1.0)


def test_quantities() -> None:
    assert F["sumQuantities"]("100m", "1") == "1100m"
    assert F["scaleQuantity"]("1Gi", 0.5) == "512Mi"
    assert F["scaleQuantity"]("2", 0.5) == "1"
    assert F["parseInt64"]("-42") == -42


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def test_public_key_of_a_pkcs1_private_key() -> None:
    key = _key()
    pem = key.private_bytes(serialization.Encoding.PEM,
                            serialization.PrivateFormat.TraditionalOpenSSL,
                            serialization.NoEncryption()).decode()
    public = F["publicKey"](pem)
    assert public.startswith("-----BEGIN PUBLIC KEY-----\n")
    assert public.endswith("-----END PUBLIC KEY-----\n")
    loaded = serialization.load_pem_public_key(public.encode())
    assert isinstance(loaded, rsa.RSAPublicKey)
    assert loaded.public_numbers() == key.public_key().public_numbers()
    # the corpus's way: a base64 config item, decoded, its public key base64 again
    item = base64.b64encode(pem.encode()).decode()
    assert render("{{ k | base64Decode | publicKey | base64 }}", k=item) == \
        base64.b64encode(public.encode()).decode()
    with pytest.raises(HelperError):
        F["publicKey"]("no pem here")


def test_certificate_expiry() -> None:
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "etcd")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1)
            .not_valid_before(dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
            .not_valid_after(dt.datetime(2034, 5, 6, 7, 8, 9, tzinfo=dt.UTC))
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    assert F["certificateExpiry"](pem) == "2034-05-06T07:08:09Z"
    with pytest.raises(HelperError):
        F["certificateExpiry"]("garbage")


def test_jwks_and_oidc_documents() -> None:
    public = _key().public_key()
    pem = public.public_bytes(serialization.Encoding.PEM,
                              serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    text = F["generateJWKSDocument"](pem)
    doc = json.loads(text)
    spki = public.public_bytes(serialization.Encoding.DER,
                               serialization.PublicFormat.SubjectPublicKeyInfo)
    kid = base64.urlsafe_b64encode(hashlib.sha256(spki).digest()).decode().rstrip("=")
    assert [k["kid"] for k in doc["keys"]] == [kid, ""]
    assert doc["keys"][0]["e"] == "AQAB" and doc["keys"][0]["alg"] == "RS256"
    assert list(doc["keys"][0]) == ["alg", "e", "kid", "kty", "n", "use"]  # Go sorts map keys
    assert text.startswith('{\n    "keys": [\n        {\n            "alg": "RS256",\n')
    oidc = F["generateOIDCDiscoveryDocument"]("https://api.example.org?a&b")
    assert '"issuer": "https://api.example.org?a\\u0026b"' in oidc
    assert list(json.loads(oidc))[:3] == ["issuer", "authorization_endpoint", "jwks_uri"]


def _pool(name: str, profile: str, **items: str) -> dict[str, object]:
    return {"name": name, "profile": profile, "config_items": items}


def test_node_pool_groups() -> None:
    pools = [
        _pool("master", "master-default"),
        _pool("default", "worker-splitaz"),
        _pool("karp", "worker-karpenter"),
        _pool("db", "worker-splitaz", labels="dedicated=db", taints="dedicated=db:NoSchedule"),
        _pool("ml", "worker-splitaz", labels="dedicated=ml", taints="dedicated=ml:NoSchedule",
              availability_zones="eu-central-1a"),
        _pool("bad", "worker-combined", labels="dedicated=web", taints="dedicated=web:NoSchedule"),
        _pool("tainted", "worker-splitaz", taints="x=y:NoSchedule"),
    ]
    assert F["zoneDistributedNodePoolGroups"](pools) == {"": True, "db": True}
    assert F["nodeLifeCycleProviderPerNodePoolGroup"](pools) == {
        "default": "", "db": "zalando", "ml": "zalando", "web": "zalando"}
    assert F["nodeLifeCycleProviderPerNodePoolGroup"](pools[2:3]) == {"default": "karpenter"}


def test_ec2_functions_need_a_session() -> None:
    with pytest.raises(HelperError, match="no AWS session"):
        F["amiID"]("img", "123")


@pytest.fixture
def ec2(moto_endpoint: str) -> ClmAccount:
    return ClmAccount(boto3.Session(region_name="eu-central-1"))


def test_ami_id_and_instance_types_on_moto(ec2: ClmAccount) -> None:
    client = boto3.Session(region_name="eu-central-1").client("ec2")
    instance = client.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1)
    instance_id = instance["Instances"][0]["InstanceId"]
    image = client.create_image(InstanceId=instance_id, Name="clmfuncs-test-image")["ImageId"]
    owner = client.describe_images(ImageIds=[image])["Images"][0]["OwnerId"]
    funcs = clm_functions(ec2=ec2)
    assert funcs["amiID"]("clmfuncs-test-image", owner) == image
    with pytest.raises(ApplyError, match="no image found"):
        funcs["amiID"]("no-such-image", owner)
    assert funcs["instanceTypeCPUQuantity"]("m5.xlarge") == "4"
    assert funcs["instanceTypeMemoryQuantity"]("m5.xlarge") == "16Gi"
    assert ec2.instance_info("m6g.large").architecture == "arm64"
    with pytest.raises(ApplyError, match="unknown instance type"):
        ec2.instance_info("m99.huge")
    with aws_session(ec2):
        assert render("{{ instanceTypeCPUQuantity('c5.2xlarge') }}") == "8"


def test_ami_id_finds_the_images_another_account_publishes(ec2: ClmAccount) -> None:
    public = publish_image("vendor-public-image", "861068367966")
    shared = publish_image("vendor-shared-image", "861068367966", public=False,
                           share_with=(ACCOUNT,))
    publish_image("vendor-private-image", "861068367966", public=False)
    publish_image("vendor-public-image", "210987654321")  # the same name, another owner

    assert ec2.ami_id("vendor-public-image", "861068367966") == public
    assert ec2.ami_id("vendor-shared-image", "861068367966") == shared
    with pytest.raises(ApplyError, match="no image found with name vendor-private-image"):
        ec2.ami_id("vendor-private-image", "861068367966")


def test_ec2_answers_are_kept_for_the_session(ec2: ClmAccount) -> None:
    first = ec2.instance_info("r5.large")
    ec2._clients.clear()  # a second call must not need a client at all
    ec2._session = None
    assert ec2.instance_info("r5.large") is first
