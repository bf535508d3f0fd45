"""The names of a cluster's CloudFormation stacks (docs/reference/config-repo.md): one definition
for rendering, the engine, the adapters and the doubles, per layout (`clmgit.layout`)."""

from __future__ import annotations

from collections.abc import Mapping

from clmgit.access import EKS_PROVIDER
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster

NODE_POOL_PREFIX = "nodepool-"
#: CLM's etcd stack: the config item that names it and the name it has otherwise.
ETCD_STACK_NAME_ITEM = "etcd_stack_name"
ETCD_STACK_NAME_DEFAULT = "etcd-cluster-etcd"


def main_stack_name(cluster: Cluster) -> str:
    """The main stack is named after the cluster's local id (in both layouts)."""
    return cluster.local_id


def extra_stack_name(cluster: Cluster, stem: str) -> str:
    """A stack of `cf-manifests/`: `cf-manifests/etcd.yaml` gives `etcd-<local id>`. (In CLM's
    layout the template names its stack in `Metadata.StackName`.)"""
    return f"{stem}-{cluster.local_id}"


def node_pool_stack_name(cluster: Cluster, pool: str, layout: Layout = DEFAULT) -> str:
    """A node pool's stack: `nodepool-<pool>-<local id>`; CLM's: `nodepool-<pool>-<id>` with
    the id's `:` as `-`."""
    if layout.clm:
        return f"{NODE_POOL_PREFIX}{pool}-{cluster.id.replace(':', '-')}"
    return f"{NODE_POOL_PREFIX}{pool}-{cluster.local_id}"


def etcd_stack_name(config_items: Mapping[str, str]) -> str:
    """CLM's etcd stack: the config item `etcd_stack_name`, else `etcd-cluster-etcd`."""
    return config_items.get(ETCD_STACK_NAME_ITEM, ETCD_STACK_NAME_DEFAULT)


def clm_cluster_name(cluster: Cluster) -> str:
    """The name CLM's tags carry for a cluster: the alias on EKS, the id elsewhere."""
    return cluster.alias if cluster.provider == EKS_PROVIDER else cluster.id
