"""A real git config repo built from a dict of files, a small but complete `cluster/` tree, and
registry records (the configuration tests' fixtures are in tests/config/conftest.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clmgit_sandbox.configrepo import ConfigRepoBuilder

from clmgit.adapters.git import GitRepo
from clmgit.config.source import GitConfigSource
from clmgit.model import Cluster, NodePool

BASE_FILES = {
    "cluster/config-defaults.yaml": (
        "tier: {% if cluster.environment == 'production' %}critical{% else %}standard{% endif %}\n"
        "replicas: 2\n"
        "db_password: default-password\n"
    ),
    "cluster/stack.yaml": (
        "Description: main stack of {{ cluster.id }}\n"
        "Resources:\n"
        "  Vpc: {Type: 'AWS::EC2::VPC'}\n"
    ),
    "cluster/cf-manifests/20-dns.yaml": "Description: dns in {{ values.stack_outputs.VpcId }}\n",
    "cluster/cf-manifests/10-etcd.yaml": "Description: etcd of {{ cluster.local_id }}\n",
    "cluster/node-pools/worker-default/stack.yaml": (
        "Description: pool {{ node_pool.name }} ({{ node_pool.config_items.tier }})\n"
        "MinSize: {{ asg_size(node_pool.min_size, 1) }}\n"
    ),
    "cluster/manifests/b-app/deployment.yaml": (
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata:\n"
        "  name: app\n"
        "  namespace: default\n"
        "  annotations:\n"
        "    config-hash: {{ manifest_hash('config.yaml') }}\n"
        "spec:\n"
        "  replicas: {{ cluster.config_items.replicas | int }}\n"
    ),
    "cluster/manifests/b-app/config.yaml": (
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata: {name: app-config, namespace: default}\n"
        "data:\n"
        "  tier: {{ cluster.config_items.tier }}\n"
    ),
    "cluster/manifests/a-rbac/rbac.yaml": (
        "---\n"
        "apiVersion: v1\n"
        "kind: ServiceAccount\n"
        "metadata: {name: robot, namespace: kube-system}\n"
        "---\n"
        "# an empty document\n"
        "---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\n"
        "kind: ClusterRole\n"
        "metadata: {name: robot}\n"
    ),
    "cluster/manifests/deletions.yaml": (
        "pre_apply:\n"
        "- kind: Deployment\n"
        "  namespace: kube-system\n"
        "  name: legacy-{{ cluster.local_id }}\n"
        "post_apply:\n"
        "- kind: Pod\n"
        "  labels: {application: old}\n"
        "  has_owner: false\n"
    ),
    "cluster/cf-deletions.yaml": "post_apply:\n- name: old-stack-{{ cluster.local_id }}\n",
}


@dataclass
class ConfigRepo:
    """A real repository whose `dev` branch gets commits of `cluster/` files."""

    builder: ConfigRepoBuilder
    source: GitConfigSource = field(init=False)

    def __post_init__(self) -> None:
        self.source = GitConfigSource(GitRepo(self.builder.path))

    def commit(self, files: Mapping[str, str | None], message: str = "Change cluster/") -> str:
        return self.builder.commit("dev", files, message)



def cluster(**overrides: Any) -> Cluster:
    """A registry record with one node pool; fields can be overridden."""
    fields: dict[str, Any] = {
        "id": "aws:123456789012:eu-central-1:kube-1",
        "alias": "kube-1",
        "infrastructure_account": "aws:123456789012",
        "region": "eu-central-1",
        "local_id": "kube-1",
        "api_server_url": "https://kube-1.example.org",
        "channel": "beta",
        "environment": "test",
        "config_items": {"replicas": "3"},
        "node_pools": (NodePool(name="default", profile="worker-default",
                                instance_types=("m5.large",), min_size=2, max_size=4),),
    }
    fields.update(overrides)
    return Cluster(**fields)
