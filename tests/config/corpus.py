"""Test helper: kubernetes-on-aws (../shared/corpus) at a branch, converted to Jinja by
`goconvert`, and the data CLM's templates see (`.Cluster`, `.NodePool`, `.Values`) built from a
clmgit registry record — until [6/8] and CLM's computed values land in clmgit itself."""

from __future__ import annotations

import hashlib
import posixpath
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import pytest

from clmgit.adapters.aws.ec2info import InstanceInfo
from clmgit.config.clmfuncs import clm_functions
from clmgit.config.defaults import parse_defaults
from clmgit.config.templates import make_environment
from clmgit.model import Cluster, NodePool
from clmgit.sandbox.corpus import corpus_bundle

from .goconvert import GO_BUILTINS, convert

BUNDLE = corpus_bundle()


def corpus_files(tmp: Path, branch: str = "dev") -> dict[str, str]:
    """`cluster/` of the corpus at `branch`: path → text. Skips when the corpus is absent."""
    if not BUNDLE.exists():
        pytest.skip(f"the corpus is not at {BUNDLE}")
    repo = tmp / "koa.git"
    if not repo.exists():
        subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(repo)], check=True)
    names = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", branch,
                            "cluster"], check=True, capture_output=True, text=True).stdout.split()
    blobs = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"],
                           input="".join(f"{branch}:{n}\n" for n in names).encode(), check=True,
                           capture_output=True).stdout
    files, pos = {}, 0
    for name in names:
        header_end = blobs.index(b"\n", pos)
        size = int(blobs[pos:header_end].split()[2])
        files[name] = blobs[header_end + 1:header_end + 1 + size].decode()
        pos = header_end + 1 + size + 1
    return files


@dataclass(frozen=True)
class GoInstanceInfo:
    """`Values.InstanceInfo` as CLM hands it to node-pool templates (methods included)."""

    info: InstanceInfo

    @property
    def VCPU(self) -> int:
        return self.info.vcpu

    @property
    def Memory(self) -> int:
        return self.info.memory

    @property
    def Architecture(self) -> str:
        return self.info.architecture

    def AvailableStorage(self, storage_scale: float, root_size: int,
                         root_scale: float) -> int:
        if self.info.instance_storage_devices == 0:
            return int(root_size * root_scale)
        return int(storage_scale * self.info.instance_storage_devices
                   * self.info.instance_storage_device_size)

    def MemoryFraction(self, percent: int) -> int:
        return percent * self.info.memory // 100


def go_pool(pool: NodePool) -> dict[str, Any]:
    items = dict(pool.config_items)
    taints = []
    for taint in filter(None, items.get("taints", "").split(",")):
        key_value, _, effect = taint.partition(":")
        key, _, value = key_value.partition("=")
        taints.append({"Key": key, "Value": value, "Effect": effect})
    return {
        "Name": pool.name, "Profile": pool.profile, "InstanceTypes": list(pool.instance_types),
        "DiscountStrategy": pool.discount_strategy, "MinSize": pool.min_size,
        "MaxSize": pool.max_size, "ConfigItems": items,
        "IsSpot": pool.discount_strategy == "spot", "IsMaster": pool.profile.startswith("master"),
        "IsKarpenter": pool.profile == "worker-karpenter", "Taints": taints,
        "KarpenterInstanceTypeStrategy": (
            "default-for-karpenter" if pool.instance_types == ("default-for-karpenter",)
            else "custom"),
        "KarpenterRequirements": [],
    }


def go_cluster(cluster: Cluster, items: dict[str, str]) -> dict[str, Any]:
    return {
        "ID": cluster.id, "LocalID": cluster.local_id, "Alias": cluster.alias,
        "Environment": cluster.environment, "Region": cluster.region,
        "InfrastructureAccount": cluster.infrastructure_account,
        "APIServerURL": cluster.api_server_url, "Owner": cluster.owner,
        "Channel": cluster.channel, "Provider": cluster.provider,
        "CriticalityLevel": cluster.criticality_level, "LifecycleStatus": cluster.lifecycle_status,
        "ConfigItems": items,
        "NodePools": [go_pool(p) for p in cluster.node_pools],
    }


class CorpusRenderer:
    """The corpus's templates, converted once, rendered in clmgit's Jinja environment."""

    def __init__(self, files: dict[str, str], ec2: Any, *,
                 converted: dict[str, str] | None = None) -> None:
        """`converted` (path → Jinja text) skips the conversion; templates are then loaded by
        name, through clmgit's compile cache, as a converted repository's would be."""
        self.files = files
        self.errors: dict[str, str] = {}  # path → why it could not be converted or compiled
        if converted is None:
            converted = {}
            for path, text in files.items():
                if path.endswith(".yaml"):
                    try:
                        converted[path] = convert(text)
                    except Exception as e:  # noqa: BLE001 - reported per file by the tests
                        self.errors[path] = f"{type(e).__name__}: {e}"
        self.converted = converted
        self.env = make_environment(jinja2.DictLoader(converted))
        self.env.globals.update(GO_BUILTINS)
        self.env.globals.update(clm_functions(ec2=ec2))
        self.templates: dict[str, Any] = {}
        for path in converted:
            try:
                self.templates[path] = self.env.get_template(path)
            except Exception as e:  # noqa: BLE001 - reported per file by the tests
                self.errors[path] = f"{type(e).__name__}: {e}"

    def render(self, path: str, root: dict[str, Any]) -> str:
        """`path` rendered; `manifestHash` renders a sibling with the same data, as CLM's. The
        globals are shared with the context, not copied per file (as `TemplateSet` does)."""
        done: dict[str, str] = {}

        def manifest_hash(name: str) -> str:
            sibling = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            if sibling not in done:
                done[sibling] = self._run(sibling, variables)
            return hashlib.sha256(done[sibling].encode()).hexdigest()

        variables = {**self.env.globals, "_root": root, "manifestHash": manifest_hash}
        return self._run(path, variables)

    def _run(self, path: str, variables: dict[str, Any]) -> str:
        template = self.templates[path]
        context = template.new_context(variables, shared=True)
        try:
            return str(self.env.concat(template.root_render_func(context)))  # type: ignore[attr-defined]
        except Exception:
            self.env.handle_exception()
            raise

    def defaults(self, cluster: Cluster) -> dict[str, str]:
        text = self.render("cluster/config-defaults.yaml",
                           {"Cluster": go_cluster(cluster, {}), "Values": {}})
        return parse_defaults(text, "cluster/config-defaults.yaml")


class CorpusEc2:
    """EC2 answers for rendering the corpus. Its AMIs are owned by Zalando's account, which
    moto cannot hold images for while answering another account, so this test double answers
    `amiID` with a stable made-up id; instance types as EC2 describes them."""

    TYPES = {
        "m5.large": InstanceInfo("m5.large", 2, 8192 * 2**20),
        "m5.xlarge": InstanceInfo("m5.xlarge", 4, 16384 * 2**20),
        "m6g.large": InstanceInfo("m6g.large", 2, 8192 * 2**20, architecture="arm64"),
        "c5d.2xlarge": InstanceInfo("c5d.2xlarge", 8, 16384 * 2**20, 1, 200 * 10**9),
    }

    def ami_id(self, name: str, owner: str) -> str:
        return "ami-" + hashlib.sha256(f"{owner}/{name}".encode()).hexdigest()[:17]

    def instance_info(self, instance_type: str) -> InstanceInfo:
        return self.TYPES[instance_type]
