"""CLM's template data, and the values CLM computes before it renders (provisioner/clusterpy.go,
node_pools.go, remote_files.go, api/): what a converted CLM template reads as `Cluster`, `Values`
and `NodePool`.

- `Cluster`, `NodePool`: the registry record with CLM's Go field names; the methods templates
  call on a pool (`IsSpot`, `IsMaster`, `IsKarpenter`, `Taints`, `KarpenterRequirements`,
  `KarpenterInstanceTypeStrategy`) are attributes; `ConfigItems` is a `ConfigItems` (a `GoMap`).
- `Values`: the network (VPC, subnets per zone and role, IPv6 CIDRs), the hosted zone, the load
  balancer certificate, the etcd KMS key and files, `ClusterStackOutputs`; per node pool
  `InstanceInfo`, `supports_t2_unlimited`, the pool's zone restriction, `S3GeneratedFilesPath`
  and `UserData`.
- `aws:kms:` config items of the cluster are decrypted (as CLM does, after the defaults are
  merged, before node pools inherit); the plaintexts are kept in `ClmSession.secrets` for
  masking and never logged.

Everything the account tells goes through a `ClmAccount` (the seam, `clmgit.accounts`:
`clmgit.adapters.aws.clmaccount.ClmAccount` on AWS, `clmgit.config.offline.OfflineAccount`
without it, `clmgit_sandbox.clmaccount.MemoryClmAccount` in memory). A render without one
(clmgit's layout) has a `PlaceholderAccount`: the network comes from clmgit's `values`, nothing
is decrypted and instance types are unknown. Generated files are never uploaded while
rendering: their S3 path is computed (it is a digest of the rendered `files.yaml`, as in CLM)
and the upload is recorded in `ClmSession.generated`; `publish` uploads them when the engine
applies (a dry run does not).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import io
import posixpath
import tarfile
import threading
import zlib
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from clmgit import yamlsafe
from clmgit.accounts import Certificate, ClmAccount, InstanceInfo, Subnet, Vpc
from clmgit.config.clmfuncs import OFFLINE_HINT, GoMap
from clmgit.config.gofmt import GoPointer, GoStruct, InstanceType, Int32, Int64, NilSlice
from clmgit.config.helpers import ALL_ZONES, HelperError
from clmgit.config.values import (
    STACK_OUTPUTS,
    PlaceholderOutputs,
    hosted_zone,
    placeholder_values,
)
from clmgit.errors import ConfigError
from clmgit.model import Cluster, NodePool, is_karpenter, is_master
from clmgit.redact import Masker
from clmgit.urls import url_host

KMS_PREFIX = "aws:kms:"
NODE_POOLS_DIR = "cluster/node-pools"
ETCD_DIR = "cluster/etcd"
ETCD_KMS_ALIAS = "alias/etcd-cluster"
BUCKET_PATTERN = "cluster-lifecycle-manager-{account}-{region}"
CUSTOM_SUBNET_TAG = "zalando.org/custom-subnet"
ROLE_TAGS = {"nodes": "kubernetes.io/role/node", "lb": "kubernetes.io/role/elb",
             "internal_nodes": "kubernetes.io/role/internal-node", "pods": "kubernetes.io/role/pod"}
_TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})
#: Files keys of the main stack's outputs, by the kind of pool the files are for.
FILES_KEY_OUTPUTS = {"master": "MasterFilesEncryptionKey", "worker": "WorkerFilesEncryptionKey"}


class ConfigItems(GoMap):
    """CLM's `map[string]string` of config items: a missing key subscripted (`index`) reads as
    "", read as a field it fails."""

    ZERO = ""


# -- CLM's data types ----------------------------------------------------------------------------

@dataclass(frozen=True)
class ClmInstance:
    """`Values.InstanceInfo`, CLM's `aws.Instance`: memory and storage in bytes, each field of
    its Go type (`InstanceType`, `int32` vCPUs, `int64` sizes) whatever it was built from."""

    InstanceType: str
    VCPU: int
    Memory: int
    InstanceStorageDevices: int
    InstanceStorageDeviceSize: int
    Architecture: str

    def __post_init__(self) -> None:
        for name, go_type in (("InstanceType", InstanceType), ("VCPU", Int32), ("Memory", Int64),
                              ("InstanceStorageDevices", Int64),
                              ("InstanceStorageDeviceSize", Int64)):
            object.__setattr__(self, name, go_type(getattr(self, name)))

    @classmethod
    def of(cls, info: InstanceInfo) -> ClmInstance:
        return cls(info.instance_type, info.vcpu, info.memory, info.instance_storage_devices,
                   info.instance_storage_device_size, info.architecture)

    def AvailableStorage(self, storage_scale: float, root_size: int,  # CLM's name
                         root_scale: float) -> int:
        if self.InstanceStorageDevices == 0:
            return Int64(float(root_size) * root_scale)
        return Int64(storage_scale * float(self.InstanceStorageDevices
                                           * self.InstanceStorageDeviceSize))

    def MemoryFraction(self, percent: int) -> int:
        product = percent * self.Memory  # Go's int64 division truncates toward zero
        return Int64(abs(product) // 100 * (-1 if product < 0 else 1))


def synthetic_instance(infos: Sequence[InstanceInfo]) -> ClmInstance:
    """One type as is; several as CLM's `<multiple>`: the least vCPUs, memory and storage of
    them, the first one's architecture."""
    if not infos:
        raise ConfigError("a node pool has no instance types")
    first = ClmInstance.of(infos[0])
    if len(infos) == 1:
        return first
    return ClmInstance(
        "<multiple>", min(i.vcpu for i in infos), min(i.memory for i in infos),
        min(i.instance_storage_devices for i in infos),
        min(i.instance_storage_device_size for i in infos), first.Architecture)


@dataclass(frozen=True)
class Taint:
    """A taint as CLM's `NodePool.Taints` gives it (Kubernetes' `Taint`, a pointer in Go)."""

    Key: str
    Value: str
    Effect: str
    TimeAdded: GoPointer = GoPointer(None)  # never set by CLM


def parse_taint(spec: str) -> Taint | None:
    """CLM's `ParseTaint`: `key`, `key:Effect` or `key=value:Effect` (an allowed effect); a
    `key` alone takes no `=`; anything else (`a=b=c:NoSchedule`, two colons) is invalid: None."""
    parts = spec.split(":")
    if len(parts) == 1:
        return None if "=" in spec else Taint(spec, "", "")
    if len(parts) != 2 or parts[1] not in _TAINT_EFFECTS:
        return None
    key_value = parts[0].split("=")
    if len(key_value) > 2:
        return None
    return Taint(key_value[0], key_value[1] if len(key_value) == 2 else "", parts[1])


def taints(items: Mapping[str, str]) -> list[Taint]:
    """The pool's `taints` item, comma-separated, each parsed as CLM's `ParseTaint` parses it,
    invalid ones left out. Without the item, or without a valid taint, CLM's method returns a
    nil slice (`NilSlice`)."""
    found = [t for t in map(parse_taint, items["taints"].split(",")) if t is not None
             ] if "taints" in items else []
    return found or NilSlice()


@dataclass(frozen=True)
class Requirement:
    """A Karpenter requirement as CLM's `NodePool.KarpenterRequirements` gives it (client-go's
    `NodeSelectorRequirementApplyConfiguration`): `Key` and `Operator` are pointers in Go (nil
    when not written), `Values` the texts as written."""

    Key: GoPointer
    Operator: GoPointer
    Values: list[str]


class _TextLoader(yaml.SafeLoader):
    """YAML as yaml.v2 reads it into CLM's string fields: every scalar the text written (`yes`,
    `0x10`, `1.0` stay as they are), except null (`~`, `null`, empty), Go's zero value."""


_TextLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag == "tag:yaml.org,2002:null"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def karpenter_requirements(items: Mapping[str, str]) -> list[Requirement]:
    """The pool's `requirements` item: a YAML list of `key`, `operator`, `values` (yaml.v2
    matches the lower-cased field names); a nil slice (`NilSlice`) without the item or when it
    does not parse (CLM logs and carries on), an empty one for `[]`."""
    if "requirements" not in items:
        return NilSlice()
    try:
        raw = yamlsafe.load(items["requirements"], "config item requirements", _TextLoader)
    except yaml.YAMLError:
        return NilSlice()
    if not isinstance(raw, list):  # empty, null or not a list: yaml.v2 leaves the slice nil
        return NilSlice()
    return [Requirement(GoPointer(_text(r.get("key"))), GoPointer(_text(r.get("operator"))),
                        [_text(v) or "" for v in _list(r.get("values"))])
            for r in raw if isinstance(r, dict)]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) or value is None else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def clm_pool(pool: NodePool) -> GoStruct:
    """`NodePool` as CLM's templates see it."""
    types = [InstanceType(t) for t in pool.instance_types]
    strategy = ("not-specified" if types == ["not-specified"] else
                "default-for-karpenter" if types == ["default-for-karpenter"] else "custom")
    return GoStruct({
        "Name": pool.name, "Profile": pool.profile, "InstanceTypes": types,
        "InstanceType": "", "DiscountStrategy": pool.discount_strategy,
        "MinSize": Int64(pool.min_size), "MaxSize": Int64(pool.max_size),
        "ConfigItems": ConfigItems(pool.config_items),
        "IsSpot": pool.discount_strategy in ("spot", "spot_max_price"),
        "IsMaster": is_master(pool.profile),
        "IsKarpenter": is_karpenter(pool.profile),
        "Taints": taints(pool.config_items),
        "KarpenterRequirements": karpenter_requirements(pool.config_items),
        "KarpenterInstanceTypeStrategy": strategy,
    })


def clm_cluster(cluster: Cluster, items: Mapping[str, str] | None = None) -> GoStruct:
    """`Cluster` as CLM's templates see it; `items` replaces its config items when given."""
    account_id = cluster.infrastructure_account.removeprefix("aws:")
    return GoStruct({
        "ID": cluster.id, "LocalID": cluster.local_id, "Alias": cluster.alias,
        "Environment": cluster.environment, "Region": cluster.region,
        "InfrastructureAccount": cluster.infrastructure_account,
        "APIServerURL": cluster.api_server_url, "Owner": cluster.owner,
        "Channel": cluster.channel, "Provider": cluster.provider,
        "CriticalityLevel": Int32(cluster.criticality_level),
        "LifecycleStatus": cluster.lifecycle_status,
        "ConfigItems": ConfigItems(cluster.config_items if items is None else items),
        "NodePools": [clm_pool(p) for p in cluster.node_pools],
        "AccountName": "",
        "Name": cluster.alias if cluster.provider == "zalando-eks" else cluster.id,
        "InfrastructureAccountID": account_id,
        "WorkerRoleARN": f"arn:aws:iam::{account_id}:role/{cluster.local_id}-worker",
    })


#: `NodePool` where CLM renders a template of no node pool: a nil `*api.NodePool`, which prints
#: `<nil>` (a nil interface would print `<no value>`).
NO_POOL = GoPointer(None)


def defaults_data(cluster: Cluster) -> dict[str, Any]:
    """CLM's data for `config-defaults.yaml`: the cluster without config items, no values."""
    return {"Cluster": clm_cluster(cluster, {}), "Values": {}, "NodePool": NO_POOL}


class NeedsAws:
    """A value only the account can tell, read offline: any use says so."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _fail(self) -> HelperError:
        return HelperError(f"{self._name} asks AWS (EC2 instance types), and this render has "
                           f"no AWS account ({OFFLINE_HINT})")

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise self._fail()

    def __str__(self) -> str:
        raise self._fail()


# -- the network ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ZoneSubnets:
    """CLM's `AZInfo`: the chosen subnet (id, IPv6 CIDRs) of each zone."""

    subnets: Mapping[str, Subnet]

    def restrict(self, zones: Sequence[str]) -> ZoneSubnets:
        return ZoneSubnets({z: self.subnets[z] for z in zones if z in self.subnets})

    def zones(self) -> list[str]:
        return sorted(self.subnets)

    def by_zone(self) -> dict[str, str]:
        return by_zone({z: s.id for z, s in self.subnets.items()})

    def ipv6_cidrs(self) -> list[str]:
        # CLM walks a Go map (any order); zone order keeps the output stable.
        return [c for z in self.zones() for c in self.subnets[z].ipv6_cidrs]


def by_zone(ids: Mapping[str, str]) -> dict[str, str]:
    """Subnet id by zone in zone order, and under `*` every zone's, comma-separated (absent if
    none)."""
    found = {z: ids[z] for z in sorted(ids)}
    if found:
        found[ALL_ZONES] = ",".join(found.values())
    return found


def select_subnets(subnets: Sequence[Subnet], tag: str) -> ZoneSubnets:
    """Per zone the subnet carrying `tag`, else the first by id (CLM's `selectSubnetIDs`)."""
    chosen: dict[str, Subnet] = {}
    for subnet in subnets:
        known = chosen.get(subnet.zone)
        if known is None or ((tag in subnet.tags) != (tag in known.tags) and tag in subnet.tags):
            chosen[subnet.zone] = subnet
        elif (tag in subnet.tags) == (tag in known.tags) and subnet.id < known.id:
            chosen[subnet.zone] = subnet
    return ZoneSubnets(chosen)


def best_certificate(certificates: Sequence[Certificate], host: str) -> str:
    """The ARN of the certificate for `host`: the longest matching name (exact, or a wildcard
    for one label), the latest expiry among equals; "" if none matches."""
    best: tuple[int, Any, str] | None = None
    for cert in certificates:
        for name in cert.names:
            if _host_matches(host, name):
                rank = (len(name), cert.not_after, cert.arn)
                if best is None or rank[:2] > best[:2]:
                    best = rank
    return "" if best is None else best[2]


def _host_matches(host: str, name: str) -> bool:
    host, name = host.lower(), name.lower()
    if name.startswith("*."):
        return "." in host and host.split(".", 1)[1] == name[2:]
    return host == name


@dataclass
class _Network:
    vpc: Vpc
    nodes: ZoneSubnets
    lb: ZoneSubnets
    internal_nodes: ZoneSubnets
    pods: ZoneSubnets


# -- one render session -------------------------------------------------------------------------

#: Renders a template of the tree with the given variables (the renderer's own render).
Render = Callable[[str, Mapping[str, Any]], str]


@dataclass(frozen=True)
class GeneratedFiles:
    """A rendered `files.yaml` to upload as CLM does (tar.gz, `encrypted` files through KMS)."""

    bucket: str
    key: str
    text: str
    kms_key: str  # the key id or ARN; "" until the stack output is known

    @property
    def s3_path(self) -> str:
        return f"s3://{self.bucket}/{self.key}"


class PlaceholderAccount:
    """The account of a render that has none (clmgit's layout, which asks AWS nothing for
    CLM's values): CLM's `Values` are made from clmgit's `values` (placeholders offline),
    `vpc_id` and `subnets` are stand-ins, nothing is decrypted, an instance type or an AMI is
    not known (`NeedsAws`), the etcd key is its alias's ARN, and nothing is uploaded."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def items(self, items: ConfigItems, secrets: set[str]) -> list[str]:
        """Fills in `items` as CLM would; the keys decrypted (none)."""
        items.setdefault("vpc_id", "vpc-placeholder")
        items.setdefault("subnets", placeholder_values(self.cluster)["subnets"][ALL_ZONES])
        return []

    def network_values(self, values: Mapping[str, Any]) -> dict[str, Any]:
        subnets = dict(values.get("subnets", {}))
        return {
            "subnets": subnets, "availability_zones": list(values.get("availability_zones", [])),
            "subnet_ipv6_cidrs": "", "lb_subnets": subnets, "internal_node_subnets": subnets,
            "pod_subnets": subnets, "hosted_zone": values.get("hosted_zone", ""),
            "load_balancer_certificate": values.get("load_balancer_certificate", ""),
            "vpc_ipv4_cidr": values.get("vpc_ipv4_cidr", ""), "vpc_ipv6_cidrs": [],
        }

    def etcd_key(self) -> str:
        cluster = self.cluster
        return (f"arn:aws:kms:{cluster.region}:"
                f"{cluster.infrastructure_account.removeprefix('aws:')}:{ETCD_KMS_ALIAS}")

    def etcd_instance(self, etcd_type: str) -> ClmInstance | None:
        return None

    def instance(self, instance_types: Sequence[str]) -> Any:
        return NeedsAws("Values.InstanceInfo")

    def pool_zones(self, zones: Sequence[str],
                   subnets: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
        """A pool's subnets by zone (and `*`) and zones, those of `zones` among `subnets`."""
        wanted = [z for z in zones if z in subnets]
        return by_zone({z: subnets[z] for z in wanted}), sorted(wanted)

    def uploads(self) -> ClmAccount:
        raise ConfigError("generated files can only be uploaded with an AWS account")


class _Discovered:
    """CLM's account facts asked of a `ClmAccount` (AWS's, the offline one, a double): the
    network discovered, `aws:kms:` items decrypted, instance types described."""

    def __init__(self, cluster: Cluster, account: ClmAccount) -> None:
        self.cluster = cluster
        self.account = account
        self._network: _Network | None = None
        self._lock = threading.Lock()

    def network(self) -> _Network:
        """VPC and subnets as CLM chooses them."""
        with self._lock:
            if self._network is None:
                self._network = _discover(self.account, self.cluster.config_items)
            return self._network

    def items(self, items: ConfigItems, secrets: set[str]) -> list[str]:
        decrypted = []
        for key, value in items.items():
            if value.startswith(KMS_PREFIX):
                items[key] = self._decrypt(key, value, secrets)
                decrypted.append(key)
        network = self.network()
        items.setdefault("vpc_id", network.vpc.id)
        items.setdefault("subnets", network.nodes.by_zone().get(ALL_ZONES, ""))
        return decrypted

    def _decrypt(self, key: str, value: str, secrets: set[str]) -> str:
        try:
            blob = base64.b64decode(value.removeprefix(KMS_PREFIX), validate=True)
        except binascii.Error:
            raise ConfigError(f"config item {key}: {KMS_PREFIX} value is not base64") from None
        text = self.account.decrypt(blob, what=f"config item {key}").decode("utf-8",
                                                                         "surrogateescape")
        if text:
            secrets.add(text)
        return text

    def network_values(self, values: Mapping[str, Any]) -> dict[str, Any]:
        net, url = self.network(), self.cluster.api_server_url
        return {
            "subnets": net.nodes.by_zone(), "availability_zones": net.nodes.zones(),
            "subnet_ipv6_cidrs": ",".join(net.nodes.ipv6_cidrs()),
            "lb_subnets": net.lb.by_zone(), "internal_node_subnets": net.internal_nodes.by_zone(),
            "pod_subnets": net.pods.by_zone(), "hosted_zone": hosted_zone(url),
            "load_balancer_certificate": best_certificate(self.account.certificates(),
                                                          url_host(url)),
            "vpc_ipv4_cidr": net.vpc.cidr, "vpc_ipv6_cidrs": list(net.vpc.ipv6_cidrs),
        }

    def etcd_key(self) -> str:
        return self.account.key_arn(ETCD_KMS_ALIAS)

    def etcd_instance(self, etcd_type: str) -> ClmInstance | None:
        return ClmInstance.of(self.account.instance_info(etcd_type)) if etcd_type else None

    def instance(self, instance_types: Sequence[str]) -> Any:
        return synthetic_instance([self.account.instance_info(t) for t in instance_types])

    def pool_zones(self, zones: Sequence[str],
                   subnets: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
        restricted = self.network().nodes.restrict(zones)
        return restricted.by_zone(), restricted.zones()

    def uploads(self) -> ClmAccount:
        return self.account


@dataclass
class ClmSession:
    """One cluster's CLM data for one render session: discovery, decryption and each pool's
    values are computed once and kept. `account` answers what CLM asks the cluster's account:
    a `ClmAccount` (AWS's, `OfflineAccount`, a double), or a `PlaceholderAccount` for a render
    that has none."""

    cluster: Cluster  # the registry record with the defaults merged in
    account: ClmAccount | PlaceholderAccount
    secrets: set[str] = field(default_factory=set)  # decrypted plaintexts, for masking
    generated: dict[str, GeneratedFiles] = field(default_factory=dict)  # by S3 path
    _published: set[GeneratedFiles] = field(default_factory=set)  # uploaded
    #: The files rendered to compute values (files.yaml, userdata.yaml), by (path, pool name).
    rendered: dict[tuple[str, str | None], str] = field(default_factory=dict)
    _items: ConfigItems | None = None
    _cluster_data: dict[str, Any] | None = None
    _pool_data: dict[str, dict[str, Any]] = field(default_factory=dict)
    _decrypted: list[str] = field(default_factory=list)  # keys of decrypted items
    _base: dict[str, Any] | None = None
    _pools: dict[tuple[str, Any], dict[str, Any]] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _facts: PlaceholderAccount | _Discovered = field(init=False)

    def __post_init__(self) -> None:
        self._facts = (self.account if isinstance(self.account, PlaceholderAccount)
                       else _Discovered(self.cluster, self.account))

    def masker(self) -> Masker:
        """Hides the decrypted config items (and their derived forms) in what is printed."""
        self.items()
        return Masker(self.secrets)

    @property
    def bucket(self) -> str:
        account = self.cluster.infrastructure_account.removeprefix("aws:")
        return BUCKET_PATTERN.format(account=account, region=self.cluster.region)

    def items(self) -> ConfigItems:
        """The cluster's config items as CLM's templates read them: `aws:kms:` ones decrypted,
        `vpc_id` and `subnets` discovered when the registry does not set them."""
        with self._lock:
            if self._items is None:
                items = ConfigItems(self.cluster.config_items)
                self._decrypted += self._facts.items(items, self.secrets)
                self._items = items
            return self._items

    def cluster_data(self) -> dict[str, Any]:
        """`Cluster`, built once per session (templates only read it)."""
        with self._lock:
            if self._cluster_data is None:
                data = clm_cluster(self.cluster, self.items())
                data["NodePools"] = [self.pool_data(p) for p in self.cluster.node_pools]
                self._cluster_data = data
            return self._cluster_data

    def pool_data(self, pool: NodePool) -> dict[str, Any]:
        """`NodePool`. Items the pool inherited from the cluster are read decrypted, as CLM
        decrypts before pools inherit; the discovered `vpc_id` and `subnets` are not inherited
        (CLM discovers them after)."""
        with self._lock:
            if pool.name in self._pool_data:
                return self._pool_data[pool.name]
            data = clm_pool(pool)
            items, own = self.items(), self.cluster.config_items
            for key in self._decrypted:
                if pool.config_items.get(key) == own[key]:
                    data["ConfigItems"][key] = items[key]
            self._pool_data[pool.name] = data
            return data

    def values(self, values: Mapping[str, Any], *,
               tree: Container[str] = (), render: Render | None = None) -> dict[str, Any]:
        """CLM's `Values` for the cluster's stacks and manifests, from clmgit's `values`
        (offline) or the account; with the etcd stack's values when the tree has one."""
        outputs = values.get(STACK_OUTPUTS, PlaceholderOutputs())
        with self._lock:
            if self._base is None:
                self._base = self._base_values(values, tree, render)
            return GoMap(self._base, ClusterStackOutputs=outputs)

    def _base_values(self, values: Mapping[str, Any], tree: Container[str],
                     render: Render | None) -> dict[str, Any]:
        cluster = self.cluster
        base = self._facts.network_values(values)
        etcd_files = f"{ETCD_DIR}/files.yaml"
        if cluster.provider == "zalando-aws" and f"{ETCD_DIR}/stack.yaml" in tree:
            etcd_key = self._facts.etcd_key()
            base["etcd_kms_key_arn"] = etcd_key
            info = self._facts.etcd_instance(self.items().get("etcd_instance_type", ""))
            if info is not None:
                base["etcd_instance_type_info"] = info
            if etcd_files in tree and render is not None:
                data = {"Cluster": self.cluster_data(), "Values": base, "NodePool": NO_POOL}
                text = self.rendered[etcd_files, None] = render(etcd_files, data)
                base["S3GeneratedFilesPath"] = self._files(text, "etcd", etcd_key)
        return base

    def pool_values(self, pool: NodePool, values: Mapping[str, Any], *,
                    tree: Container[str], render: Render) -> dict[str, Any]:
        """CLM's `Values` for a node pool's templates: the cluster's, and for pools with an
        Auto Scaling group `InstanceInfo`, `supports_t2_unlimited` and the pool's zones; then
        `S3GeneratedFilesPath` (its `files.yaml`) and `UserData` (its `userdata.yaml`, gzipped
        and base64 except for Karpenter pools, which take it as text)."""
        outputs = values.get(STACK_OUTPUTS, PlaceholderOutputs())
        placeholders = isinstance(outputs, PlaceholderOutputs)
        # The values depend on every stack output, on none of the placeholders.
        key = (pool.name, None if placeholders
               else tuple(sorted((str(k), str(v)) for k, v in outputs.items())))
        with self._lock:
            if key in self._pools:
                return self._pools[key]
        pool_values = self.values(values, tree=tree, render=render)
        karpenter = is_karpenter(pool.profile)
        if not karpenter:
            pool_values["supports_t2_unlimited"] = all(t.startswith("t2.")
                                                       for t in pool.instance_types)
            pool_values["InstanceInfo"] = self._facts.instance(pool.instance_types)
            zones = pool.config_items.get("availability_zones")
            if zones is not None:
                pool_values["subnets"], pool_values["availability_zones"] = (
                    self._facts.pool_zones(zones.split(","), pool_values["subnets"]))
        directory = f"{NODE_POOLS_DIR}/{pool.profile}"
        data = {"Cluster": self.cluster_data(), "Values": pool_values,
                "NodePool": self.pool_data(pool)}
        if f"{directory}/files.yaml" in tree:
            kind = "master" if is_master(pool.profile) else "worker"
            kms_key = "" if placeholders else str(outputs.get(FILES_KEY_OUTPUTS[kind], ""))
            text = render(f"{directory}/files.yaml", data)
            self.rendered[f"{directory}/files.yaml", pool.name] = text
            # A render before the stacks (the engine's check that everything renders) knows no
            # KMS key: its files are named, never uploaded; the pool's own render records them.
            pool_values["S3GeneratedFilesPath"] = self._files(text, kind, kms_key,
                                                              publish=not placeholders)
        if f"{directory}/userdata.yaml" in tree:
            text = render(f"{directory}/userdata.yaml", data)
            self.rendered[f"{directory}/userdata.yaml", pool.name] = text
            pool_values["UserData"] = text if karpenter else user_data(text)
        with self._lock:
            self._pools[key] = pool_values
        return pool_values

    def _files(self, text: str, directory: str, kms_key: str, *, publish: bool = True) -> str:
        """The S3 path of rendered files (a digest of the text, as CLM names it), recorded for
        `publish` unless told otherwise."""
        name = hashlib.sha512(text.encode("utf-8", "surrogateescape")).hexdigest() + ".userdata"
        files = GeneratedFiles(self.bucket, posixpath.join(self.cluster.local_id, directory,
                                                           name), text, kms_key)
        if publish:
            self.generated[files.s3_path] = files
        return files.s3_path

    def publish(self) -> list[str]:
        """Upload the recorded sets of generated files not uploaded yet (the engine's apply
        step; a dry run does not call it); an archive already at the key that holds the same
        files (CLM's, after a takeover) stays. Returns the S3 paths uploaded now."""
        account = self._facts.uploads()
        uploaded = []
        for files in self.generated.values():
            if files in self._published:
                continue
            there = account.get_object(files.bucket, files.key)
            if there is None or not archive_holds(there, files.text, account):
                body = files_archive(files.text, files.kms_key, account)
                account.put_object(files.bucket, files.key, body)
                uploaded.append(files.s3_path)
            self._published.add(files)
        return uploaded


def user_data(text: str) -> str:
    """EC2 user data as CLM hands it to a stack: gzip, then standard base64. The text inside is
    CLM's; the compressed bytes are zlib's, not Go's."""
    return base64.b64encode(gzip.compress(text.encode("utf-8", "surrogateescape"), mtime=0,
                                          compresslevel=6)).decode()


@dataclass(frozen=True)
class _File:
    """One file of a `files.yaml`, as it goes into the archive (before any encryption)."""

    path: str
    data: bytes
    encrypted: bool
    mode: int

    @property
    def name(self) -> str:
        return self.path + ".enc" if self.encrypted else self.path


def _files_of(text: str) -> list[_File]:
    """The files of a rendered `files.yaml` (`files:` of path, data (base64), encrypted,
    permissions)."""
    try:
        raw = yamlsafe.load(text, "files.yaml", yaml.SafeLoader) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"files.yaml does not parse: {e}") from None
    if not isinstance(raw, dict) or set(raw) - {"files"}:
        raise ConfigError("files.yaml must hold only `files:`")
    found = []
    for entry in raw.get("files") or []:
        if not isinstance(entry, dict) or set(entry) - {"path", "data", "encrypted",
                                                        "permissions"}:
            raise ConfigError("files.yaml: each file has path, data, encrypted, permissions")
        path = str(entry.get("path", ""))
        try:
            data = base64.b64decode(str(entry.get("data", "")), validate=True)
        except binascii.Error:
            raise ConfigError(f"files.yaml: the data of {path} is not base64") from None
        found.append(_File(path, data, bool(entry.get("encrypted")),
                           int(entry.get("permissions") or 0)))
    return found


def files_archive(text: str, kms_key: str, account: ClmAccount) -> bytes:
    """A rendered `files.yaml` as the tar.gz CLM uploads: `encrypted` files KMS-encrypted and
    named `<path>.enc`."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for file in _files_of(text):
            data = file.data
            if file.encrypted:
                if not kms_key:
                    raise ConfigError(f"files.yaml: {file.path} is to be encrypted, and the "
                                      "stack output with the KMS key is not known")
                data = account.encrypt(kms_key, data, what=file.path)
            info = tarfile.TarInfo(file.name)
            info.size = len(data)
            info.mode = file.mode
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def archive_holds(archive: bytes, text: str, account: ClmAccount) -> bool:
    """Whether an uploaded archive holds the files of `text`: the same names, modes and
    contents in the same order, encrypted files compared decrypted. Its bytes cannot tell: the
    gzip of Go (CLM) and of zlib differ, and KMS encrypts the same plaintext differently each
    time."""
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            members = [(m, tar.extractfile(m)) for m in tar.getmembers()]
            found = [(m.name, m.mode, f.read() if f else b"") for m, f in members]
    except (tarfile.TarError, OSError, EOFError, zlib.error):
        return False
    wanted = _files_of(text)
    if [(name, mode) for name, mode, _ in found] != [(f.name, f.mode) for f in wanted]:
        return False
    return all(
        (account.decrypt(data, what=f.path) if f.encrypted else data) == f.data
        for (_, _, data), f in zip(found, wanted, strict=True))


def _discover(account: ClmAccount, items: Mapping[str, str]) -> _Network:
    vpc = account.vpc(items["vpc_id"]) if "vpc_id" in items else account.default_vpc()
    subnets = [s for s in account.subnets(vpc.id) if CUSTOM_SUBNET_TAG not in s.tags]
    if "subnets" in items:
        wanted = items["subnets"].split(",")
        subnets = [s for s in subnets if s.id in wanted]
        if len(subnets) != len(wanted):
            raise ConfigError(f"invalid or unknown subnets in the config item subnets: "
                              f"{items['subnets']}")
    chosen = {role: select_subnets(subnets, tag) for role, tag in ROLE_TAGS.items()}
    if "availability_zones" in items:
        zones = items["availability_zones"].split(",")
        for role in ("nodes", "lb", "internal_nodes"):
            chosen[role] = chosen[role].restrict(zones)
    return _Network(vpc, chosen["nodes"], chosen["lb"], chosen["internal_nodes"], chosen["pods"])
