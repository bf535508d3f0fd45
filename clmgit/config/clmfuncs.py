"""CLM's template function library: every function CLM's templates may call, under CLM's names
and with CLM's semantics (provisioner/template.go, the sprig functions it takes), as plain Python
callables.

`clm_functions` returns the name → callable table. The Jinja renderer registers it (as globals,
and as filters where the name does not shadow one of Jinja's own); a Go-template evaluator can
take the same table, arguments in CLM's order. Values are plain Python: strings, ints, lists,
dicts, and small frozen dataclasses whose fields carry CLM's Go names (`PortRange.FromPort`).

Go strings are bytes; Python's are text. `base64Decode` keeps bytes that are not UTF-8 as
surrogate escapes, and every function that turns text back into bytes (`base64`, `sha256`,
`publicKey`, ...) reverses that, so a binary value survives a decode/encode round trip as it
does in CLM.

`amiID` and the instance-type functions ask EC2 through an `Ec2Info`: the one passed to
`clm_functions`, else the one `aws_session` made current for the render in progress. Each
`Ec2Info` keeps its answers, so a render session asks AWS once per question.

`manifestHash` needs the render in progress; the renderer supplies it.
"""

from __future__ import annotations

import base64 as b64
import binascii
import functools
import hashlib
import ipaddress
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from clmgit.accounts import Ec2Info
from clmgit.config import gofmt, helpers, quantity
from clmgit.config.gofmt import Int64, sprint_value
from clmgit.config.helpers import HelperError
from clmgit.model import KARPENTER_PROFILE, is_karpenter, is_master
from clmgit.timestamps import format_timestamp

#: What to do when an offline render (`render`, `diff`) meets a value only AWS can tell.
OFFLINE_HINT = "`clmgit reconcile --dry-run` renders with the cluster's account"


_EC2: ContextVar[Ec2Info | None] = ContextVar("clmgit_clm_ec2", default=None)
_PEM_RE = re.compile(r"-----BEGIN ([^\n-]*)-----\r?\n(.*?)-----END \1-----", re.DOTALL)
_PORT_RE = re.compile(r":[0-9]*")


def _bytes(value: Any, function: str) -> bytes:
    return _string(value, function).encode("utf-8", "surrogateescape")


def _string(value: Any, function: str) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if not isinstance(value, str):
        str(value)  # an undefined value raises here and names itself
        raise HelperError(f"{function} expects a string, not {type(value).__name__}")
    return value


def _int(value: Any, function: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise HelperError(f"{function} expects a whole number, not {value!r}")
    return value


# -- text and encodings ------------------------------------------------------------------------

def base64_encode(value: Any) -> str:
    """Standard base64 of the bytes of `value`."""
    return b64.b64encode(_bytes(value, "base64")).decode()


def base64_decode(value: Any) -> str:
    """The bytes whose standard base64 is `value`, as they are (not necessarily UTF-8)."""
    try:
        data = b64.b64decode(_string(value, "base64Decode"), validate=True)
    except (binascii.Error, ValueError) as e:
        raise HelperError(f"base64Decode: {e}") from None
    return data.decode("utf-8", "surrogateescape")


def sha256_hex(value: Any) -> str:
    return hashlib.sha256(_bytes(value, "sha256")).hexdigest()


def split(value: Any, separator: Any) -> list[str]:
    """`value` cut at every `separator`; an empty string gives no parts at all."""
    text = _string(value, "split")
    return text.split(_string(separator, "split")) if text else []


def join(separator: Any, items: Any) -> str:
    """sprig's `join`: the items printed as Go prints them, nil items left out."""
    if items is None:
        return ""
    if isinstance(items, str):
        parts = [items]
    elif isinstance(items, list | tuple):
        parts = [sprint_value(item) for item in items if item is not None]
    else:
        parts = [sprint_value(items)]
    return _string(separator, "join").join(parts)


def indent(spaces: Any, value: Any) -> str:
    """sprig's `indent`: every line of `value`, the first included, after `spaces` spaces."""
    pad = " " * _int(spaces, "indent")
    return pad + sprint_value(value).replace("\n", "\n" + pad)


def has_prefix(value: Any, prefix: Any) -> bool:
    return _string(value, "hasPrefix").startswith(_string(prefix, "hasPrefix"))


def has_suffix(value: Any, suffix: Any) -> bool:
    return _string(value, "hasSuffix").endswith(_string(suffix, "hasSuffix"))


def mount_unit_name(path: Any) -> str:
    """A systemd mount unit's name for an absolute path (`/var/lib/x` → `var-lib-x`)."""
    text = _string(path, "mountUnitName")
    if not text.startswith("/"):
        raise HelperError(f"mountUnitName: not an absolute path: {text}")
    return text[1:].replace("/", "-")


def aws_valid_id(value: Any) -> str:
    """`value` with every `:` as `__` (for CloudFormation logical ids)."""
    return _string(value, "awsValidID").replace(":", "__")


def indexed_list(item_template: Any, length: Any) -> str:
    """`length` copies of `item_template`, `$` replaced by the index, joined with commas."""
    count = _int(length, "indexedList")
    if count < 0:
        raise HelperError(f"indexedList: expecting non-negative integer, got: {count}")
    item = _string(item_template, "indexedList")
    return ",".join(item.replace("$", str(i)) for i in range(count))


# -- accounts ----------------------------------------------------------------------------------

def get_aws_account_id(account: Any) -> str:
    """The part after the first `:` of an infrastructure account, up to the next `:`."""
    parts = _string(account, "getAWSAccountID").split(":")
    if len(parts) < 2:
        raise HelperError(f"getAWSAccountID: {account!r} is not an account of the form type:id")
    return parts[1]


# -- collections -------------------------------------------------------------------------------

class GoMap(dict[str, Any]):
    """A Go map as CLM's templates read it: subscripting a missing key (a converted `index`)
    gives the map's zero value, `ZERO` — nil for `map[string]interface{}` (`dict`, `.Values`),
    "" for config items — where Jinja would give an undefined value. Read as a field (`.key`) a
    missing key still fails, as with CLM's `missingkey=error`."""

    ZERO: Any = None


def go_index(target: Any, *keys: Any) -> Any:
    """Go's `index` builtin, which converted templates call by its name: `target[k1][k2]...`,
    where a key a map lacks gives the map's zero value — `ZERO` of a `GoMap` or config items,
    else "" for a map of strings and nil for any other — and a list's index must be in range."""
    for key in keys:
        if isinstance(target, Mapping):
            if not isinstance(key, str | bytes):  # CLM's maps are keyed by strings
                kind = "nil" if key is None else gofmt.go_type(key)
                raise HelperError(f"index: value has type {kind}; should be string")
            target = target[key] if key in target else _zero_value(target)
        elif isinstance(target, list | tuple | str | bytes):
            if isinstance(target, str):  # a string's elements are its bytes, as in Go
                target = target.encode("utf-8", "surrogateescape")
            if isinstance(key, bool) or not isinstance(key, int):
                raise HelperError(f"index: cannot index slice/array with type "
                                  f"{type(key).__name__}")
            if not 0 <= key < len(target):
                raise HelperError(f"index: index out of range: {key}")
            target = target[key]
        else:
            str(target)  # an undefined value raises here and names itself
            kind = "nil" if target is None else type(target).__name__
            raise HelperError(f"index: cannot index {kind}")
    return target


def _zero_value(mapping: Mapping[Any, Any]) -> Any:
    if isinstance(mapping, GoMap):
        return mapping.ZERO
    return "" if mapping and all(type(v) is str for v in mapping.values()) else None


def make_dict(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """A map from key, value, key, value, ... (string keys, each once). Keyword arguments alone
    build a dict as Jinja's own `dict` does."""
    if kwargs and not args:
        return dict(kwargs)
    if kwargs or not args or len(args) % 2:
        raise HelperError(f"dict: invalid number of arguments: {len(args)}")
    result = GoMap()
    for i in range(0, len(args), 2):
        key = args[i]
        if not isinstance(key, str):
            raise HelperError(f"dict: key argument {i} must be string")
        if key in result:
            raise HelperError(f"dict: duplicate key {key}")
        result[key] = args[i + 1]
    return result


def make_list(*args: Any) -> list[Any]:
    return list(args)


def append(items: Any, item: Any, *more: Any) -> list[Any]:
    """A new list: `items` followed by `item` and `more`."""
    return [*(items or []), item, *more]


# -- network -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class HostPort:
    Host: str  # CLM's templates read these Go field names
    Port: str


@dataclass(frozen=True)
class PortRange:
    FromPort: int
    ToPort: int


@dataclass(frozen=True)
class SGIngressRange:
    CIDR: str
    FromPort: int
    ToPort: int
    Protocol: str


def _atoi(text: str, what: str, whole: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise HelperError(f"invalid {what}: {text} in input: {whole}")
    return int(text)


def _ports(ports: str, ends_allowed: tuple[int, ...], function: str,
           whole: str) -> tuple[int, int]:
    """`from-to` (or a single port, where `ends_allowed` has 1) as a valid port range."""
    ends = ports.split("-")
    if len(ends) not in ends_allowed:
        raise HelperError(f"invalid input for {function}: {whole}")
    low, high = _atoi(ends[0], "start port", whole), _atoi(ends[-1], "end port", whole)
    if not 0 <= low <= high <= 65535:
        raise HelperError(f"port range {low}-{high} is invalid")
    return low, high


def port_ranges(ranges: Any) -> list[PortRange]:
    """`from-to,from-to,...` as port ranges."""
    text = _string(ranges, "portRanges")
    return [PortRange(*_ports(part, (2,), "portRange", text)) for part in text.split(",")]


def sg_ingress_ranges(ranges: Any) -> list[SGIngressRange]:
    """`[protocol:]cidr:port[-port],...` as security group ingress ranges (protocol tcp unless
    given; the CIDR normalised to its network)."""
    text = _string(ranges, "sgIngressRanges")
    result = []
    for part in text.split(","):
        fields = part.split(":")
        if len(fields) == 2:
            protocol, cidr, ports = "tcp", fields[0], fields[1]
        elif len(fields) == 3:
            protocol, cidr, ports = fields
            if protocol not in ("tcp", "udp"):
                raise HelperError(f"invalid protocol '{protocol}' only 'tcp' or 'udp' supported: "
                                  f"{text}")
        else:
            raise HelperError(f"invalid input for sgIngressRanges: {text}")
        network = _network(cidr, "sgIngressRanges")
        low, high = _ports(ports, (1, 2), "sgIngressRanges", text)
        result.append(SGIngressRange(str(network), low, high, protocol))
    return result


def _network(cidr: str, function: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    if "/" not in cidr:
        raise HelperError(f"{function}: invalid CIDR address: {cidr}")
    try:
        return ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        raise HelperError(f"{function}: invalid CIDR address: {cidr}") from None


def split_host_port(value: Any) -> HostPort:
    """`host:port` or `[v6host]:port` split as Go's `net.SplitHostPort` does."""
    text = _string(value, "splitHostPort")
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or not text[end + 1:].startswith(":"):
            raise HelperError(f"splitHostPort: missing port in address {text}")
        host, port = text[1:end], text[end + 2:]
    else:
        host, sep, port = text.rpartition(":")
        if not sep:
            raise HelperError(f"splitHostPort: missing port in address {text}")
        if ":" in host:
            raise HelperError(f"splitHostPort: too many colons in address {text}")
    if "[" in port or "]" in port or "[" in host or "]" in host:
        raise HelperError(f"splitHostPort: unexpected bracket in address {text}")
    return HostPort(host, port)


def extract_endpoint_hosts(endpoints: Any) -> list[str]:
    """The distinct host names of comma-separated endpoints (`http://` assumed), sorted."""
    hosts = set()
    for endpoint in _string(endpoints, "extractEndpointHosts").split(","):
        if not endpoint.startswith("http"):
            endpoint = "http://" + endpoint
        hosts.add(_url_hostname(endpoint))
    return sorted(hosts)


def _url_hostname(url: str) -> str:
    """The host of a URL as Go's `URL.Hostname` gives it: no user, no port, no brackets."""
    _, sep, rest = url.partition("://")
    if not sep:
        return ""
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    authority = authority.rpartition("@")[2]
    if authority.startswith("["):
        return authority[1:authority.find("]")] if "]" in authority else authority[1:]
    colon = authority.rfind(":")
    if colon >= 0 and _PORT_RE.fullmatch(authority[colon:]):
        return authority[:colon]
    return authority


def nth_address_from_cidr(cidr: Any, n: Any) -> str:
    """The network's address with `n` added to its last byte (wrapping within that byte)."""
    network = _network(_string(cidr, "nthAddressFromCIDR"), "nthAddressFromCIDR")
    packed = bytearray(network.network_address.packed)
    packed[-1] = (packed[-1] + _int(n, "nthAddressFromCIDR")) % 256
    return str(ipaddress.ip_address(bytes(packed)))


def stups_nat_subnets(vpc_cidr: Any) -> list[str]:
    """The three /28 NAT subnets of the STUPS layout: the first three of the second quarter of
    the VPC's network."""
    network = _network(_string(vpc_cidr, "stupsNATSubnets"), "stupsNATSubnets")
    if network.version != 4:
        raise HelperError(f"stupsNATSubnets: only ipv4 subnets are supported, got {network}")
    if network.prefixlen == 0 or network.prefixlen > 24:
        raise HelperError(f"invalid subnet, expecting at least /24: {network}")
    second_quarter = list(network.subnets(new_prefix=network.prefixlen + 2))[1]
    nat = second_quarter.subnets(new_prefix=28)
    return [str(next(nat)) for _ in range(3)]


def _check_cidr_mask(mask_size: int) -> None:
    if not 24 <= mask_size <= 28:
        raise HelperError(f"invalid value for maskSize: {mask_size}")


def node_cidr_max_nodes_pod_cidr(pod_cidr_mask_size: Any, mask_size: Any, reserved: Any) -> int:
    """How many nodes fit: node CIDRs of /`mask_size` in a pod CIDR of /`pod_cidr_mask_size`,
    less `reserved`."""
    pod_mask = _int(pod_cidr_mask_size, "nodeCIDRMaxNodesPodCIDR")
    mask = _int(mask_size, "nodeCIDRMaxNodesPodCIDR")
    if not 14 <= pod_mask <= 16:
        raise HelperError(f"invalid for podCIDRMaskSize: {pod_mask}")
    _check_cidr_mask(mask)
    return int(2 << (mask - pod_mask - 1)) - _int(reserved, "nodeCIDRMaxNodesPodCIDR")


def node_cidr_max_nodes(mask_size: Any, reserved: Any) -> int:
    """`nodeCIDRMaxNodesPodCIDR` with a /16 pod CIDR (CLM keeps it for older channels)."""
    return node_cidr_max_nodes_pod_cidr(16, mask_size, reserved)


def node_cidr_max_pods(mask_size: Any, extra_capacity: Any) -> int:
    """Pods per node for a node CIDR of /`mask_size`: half its addresses plus
    `extra_capacity`, at most 110."""
    mask = _int(mask_size, "nodeCIDRMaxPods")
    _check_cidr_mask(mask)
    return min((2 << (32 - mask - 2)) + _int(extra_capacity, "nodeCIDRMaxPods"), 110)


# -- keys and certificates -----------------------------------------------------------------------

def _pem_block(text: Any, function: str) -> tuple[str, bytes]:
    match = _PEM_RE.search(_bytes(text, function).decode("utf-8", "replace"))
    if match is None:
        raise HelperError(f"{function}: no PEM data found")
    lines = [line for line in match.group(2).splitlines() if ":" not in line]
    try:
        return match.group(1), b64.b64decode("".join(lines).replace(" ", ""), validate=True)
    except (binascii.Error, ValueError):
        raise HelperError(f"{function}: no PEM data found") from None


def public_key(private_key: Any) -> str:
    """The PEM public key (PKIX) of a PEM RSA private key in PKCS #1 form."""
    return _public_key(_bytes(private_key, "publicKey"))


@functools.lru_cache(maxsize=64)
def _public_key(private_key: bytes) -> str:
    # Kept per key: every cluster of a fleet usually shares few keys, and reading one costs
    # milliseconds. Only the public half is taken, so the private key's checks are skipped.
    # cryptography is imported by the three functions that need it: 70 ms of every process
    # that renders, for templates that seldom call them.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    _, der = _pem_block(private_key, "publicKey")
    try:
        key = serialization.load_der_private_key(der, password=None,
                                                 unsafe_skip_rsa_key_validation=True)
    except ValueError as e:
        raise HelperError(f"publicKey: {e}") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise HelperError("publicKey: not an RSA private key")
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def certificate_expiry(certificate: Any) -> str:
    """When a PEM certificate expires, RFC 3339 in UTC (`2030-01-02T03:04:05Z`)."""
    from cryptography import x509

    _, der = _pem_block(certificate, "certificateExpiry")
    try:
        cert = x509.load_der_x509_certificate(der)
    except ValueError as e:
        raise HelperError(f"certificateExpiry: {e}") from None
    return format_timestamp(cert.not_valid_after_utc)


def _b64url(data: bytes) -> str:
    return b64.urlsafe_b64encode(data).decode().rstrip("=")


def _go_json(value: Any, *, sort_keys: bool) -> str:
    """JSON as Go's `json.MarshalIndent(v, "", "    ")` writes it (HTML characters escaped)."""
    text = json.dumps(value, indent=4, ensure_ascii=False, sort_keys=sort_keys)
    for char, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def generate_jwks_document(service_account_key: Any) -> str:
    """The JWKS document (`keys.json`) of a PEM RSA public key: the key twice, with its key id
    and with an empty one."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    _, der = _pem_block(service_account_key, "generateJWKSDocument")
    try:
        key = serialization.load_der_public_key(der)
    except ValueError as e:
        raise HelperError(f"generateJWKSDocument: failed to parse public key: {e}") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise HelperError("generateJWKSDocument: Public key was not RSA")
    numbers = key.public_numbers()
    spki = key.public_bytes(serialization.Encoding.DER,
                            serialization.PublicFormat.SubjectPublicKeyInfo)
    jwk = {
        "use": "sig", "kty": "RSA", "kid": _b64url(hashlib.sha256(spki).digest()), "alg": "RS256",
        "n": _b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
        "e": _b64url(numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")),
    }
    return _go_json({"keys": [jwk, {**jwk, "kid": ""}]}, sort_keys=True)


def generate_oidc_discovery_document(api_server_url: Any) -> str:
    """The OpenID Connect discovery document of an API server URL."""
    url = _string(api_server_url, "generateOIDCDiscoveryDocument")
    return _go_json({
        "issuer": url,
        "authorization_endpoint": "urn:kubernetes:programmatic_authorization",
        "jwks_uri": f"{url}/openid-configuration/keys.json",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "claims_supported": ["sub", "iss"],
    }, sort_keys=False)


# -- quantities --------------------------------------------------------------------------------

def kubernetes_size_to_kilobytes(size: Any, scale: Any) -> str:
    """A whole Kubernetes size times `scale`, in kilobytes rounded up (`1Gi`, 0.5 → `524288KB`)."""
    text = _string(size, "kubernetesSizeToKiloBytes")
    try:
        whole = quantity.as_int64(text)
    except quantity.QuantityError as e:
        raise HelperError(f"kubernetesSizeToKiloBytes: {e}") from None
    if whole is None:  # CLM's AsInt64 refuses it
        raise HelperError(f"unexpected size for quantity: {text}")
    if isinstance(scale, bool) or not isinstance(scale, int | float):
        raise HelperError(f"kubernetesSizeToKiloBytes: the scale must be a number, not {scale!r}")
    return f"{math.ceil(float(whole) / 1024 * scale)}KB"


def parse_int64(text: Any) -> Int64:
    """`parseInt64`: Go's int64, which is how fmt names it (`%!s(int64=1)`)."""
    return Int64(helpers.parse_int64(text))


# -- node pools ------------------------------------------------------------------------------------

def _pool_field(pool: Any, snake: str, go: str) -> Any:
    if isinstance(pool, Mapping):
        return pool.get(snake, pool.get(go))
    return getattr(pool, snake, None) if hasattr(pool, snake) else getattr(pool, go, None)


def _profile(pool: Any) -> str:
    return str(_pool_field(pool, "profile", "Profile") or "")


def _items(pool: Any) -> Mapping[str, Any]:
    return _pool_field(pool, "config_items", "ConfigItems") or {}


def _labels(pool: Any) -> dict[str, str]:
    result = {}
    for item in str(_items(pool).get("labels", "")).split(","):
        key, sep, value = item.partition("=")
        if sep:
            result[key] = value
    return result


def _pool_groups(node_pools: Sequence[Any]) -> dict[str, list[Any]]:
    """Worker pools grouped by their `dedicated` label; pools without one and without taints
    form the default group, `""`."""
    groups: dict[str, list[Any]] = {}
    for pool in node_pools or ():
        if is_master(_profile(pool), prefix=True):
            continue
        group = _labels(pool).get("dedicated", "")
        if group:
            groups.setdefault(group, []).append(pool)
        elif "taints" not in _items(pool):
            groups.setdefault("", []).append(pool)
    return groups


def _distributed(group: str, pools: list[Any]) -> bool:
    for pool in pools:
        items = _items(pool)
        if group and items.get("taints", "") != f"dedicated={group}:NoSchedule":
            return False
        if "availability_zones" in items:
            return False
        if _profile(pool) != "worker-splitaz" and not is_karpenter(_profile(pool)):
            return False
    return bool(pools)


def zone_distributed_node_pool_groups(node_pools: Sequence[Any]) -> dict[str, bool]:
    """The pool groups (by `dedicated` label, `""` for the default) safe for even spreading over
    zones: every pool correctly tainted, not limited to zones, of a zone-spreading profile."""
    return {group: True for group, pools in _pool_groups(node_pools).items()
            if _distributed(group, pools)}


_PROVIDERS = {KARPENTER_PROFILE: "karpenter", "worker-combined": "zalando",
              "worker-splitaz": "zalando"}


def node_life_cycle_provider_per_node_pool_group(node_pools: Sequence[Any]) -> dict[str, str]:
    """Each pool group's (`default` for the default) node provider: `karpenter` or `zalando` by
    its pools' common profile, `""` when they differ."""
    result = {}
    for group, pools in _pool_groups(node_pools).items():
        profiles = {_profile(pool) for pool in pools}
        profile = profiles.pop() if len(profiles) == 1 else ""
        result[group or "default"] = _PROVIDERS.get(profile, "")
    return result


# -- EC2 ------------------------------------------------------------------------------------

@contextmanager
def aws_session(ec2: Ec2Info | None) -> Iterator[None]:
    """Make `ec2` the one the EC2-asking functions use while the block runs (one render)."""
    token = _EC2.set(ec2)
    try:
        yield
    finally:
        _EC2.reset(token)


def _ec2_functions(ec2: Ec2Info | None) -> dict[str, Callable[..., Any]]:
    def current(function: str) -> Ec2Info:
        found = ec2 if ec2 is not None else _EC2.get()
        if found is None:
            raise HelperError(f"{function} asks AWS, and this render has no AWS session "
                              f"({OFFLINE_HINT})")
        return found

    def ami_id(image_name: Any, image_owner: Any) -> str:
        return current("amiID").ami_id(_string(image_name, "amiID"), _string(image_owner, "amiID"))

    def instance_type_cpu_quantity(instance_type: Any) -> str:
        name = _string(instance_type, "instanceTypeCPUQuantity")
        return str(current("instanceTypeCPUQuantity").instance_info(name).vcpu)

    def instance_type_memory_quantity(instance_type: Any) -> str:
        name = _string(instance_type, "instanceTypeMemoryQuantity")
        memory = current("instanceTypeMemoryQuantity").instance_info(name).memory
        return str(quantity.Quantity(memory * quantity.NANO, quantity.BINARY_SI))

    return {
        "amiID": ami_id,
        "instanceTypeCPUQuantity": instance_type_cpu_quantity,
        "instanceTypeMemoryQuantity": instance_type_memory_quantity,
    }


# -- the table -----------------------------------------------------------------------------------

_PURE: dict[str, Callable[..., Any]] = {
    "getAWSAccountID": get_aws_account_id,
    "base64": base64_encode,
    "base64Decode": base64_decode,
    "sha256": sha256_hex,
    "asgSize": helpers.asg_size,
    "azID": helpers.az_id,
    "azCount": helpers.az_count,
    "split": split,
    "join": join,
    "mountUnitName": mount_unit_name,
    "accountID": helpers.account_id,
    "portRanges": port_ranges,
    "sgIngressRanges": sg_ingress_ranges,
    "splitHostPort": split_host_port,
    "extractEndpointHosts": extract_endpoint_hosts,
    "publicKey": public_key,
    "stupsNATSubnets": stups_nat_subnets,
    "nodeCIDRMaxNodes": node_cidr_max_nodes,
    "nodeCIDRMaxNodesPodCIDR": node_cidr_max_nodes_pod_cidr,
    "nodeCIDRMaxPods": node_cidr_max_pods,
    "nthAddressFromCIDR": nth_address_from_cidr,
    "parseInt64": parse_int64,
    "generateJWKSDocument": generate_jwks_document,
    "generateOIDCDiscoveryDocument": generate_oidc_discovery_document,
    "hasPrefix": has_prefix,
    "hasSuffix": has_suffix,
    "kubernetesSizeToKiloBytes": kubernetes_size_to_kilobytes,
    "indexedList": indexed_list,
    "zoneDistributedNodePoolGroups": zone_distributed_node_pool_groups,
    "nodeLifeCycleProviderPerNodePoolGroup": node_life_cycle_provider_per_node_pool_group,
    "certificateExpiry": certificate_expiry,
    "sumQuantities": helpers.sum_quantities,
    "awsValidID": aws_valid_id,
    "indent": indent,
    "dict": make_dict,
    "list": make_list,
    "append": append,
    "scaleQuantity": helpers.scale_quantity,
}

NAMES = frozenset({*_PURE, "amiID", "instanceTypeCPUQuantity", "instanceTypeMemoryQuantity",
                   "manifestHash"})
"""Every function name CLM's templates may call."""


def clm_functions(*, ec2: Ec2Info | None = None,
                  manifest_hash: Callable[[str], str] | None = None,
                  ) -> dict[str, Callable[..., Any]]:
    """CLM's template functions by CLM's name. The EC2-asking ones use `ec2`, or when it is None
    the `Ec2Info` of the `aws_session` in progress; `manifestHash` is included when given."""
    table = {**_PURE, **_ec2_functions(ec2)}
    if manifest_hash is not None:
        table["manifestHash"] = manifest_hash
    return table
