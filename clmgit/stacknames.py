"""The names of a cluster's CloudFormation stacks (DESIGN.md §6): one definition for rendering,
the engine, the adapters and the doubles."""

from __future__ import annotations

from clmgit.model import Cluster

NODE_POOL_PREFIX = "nodepool-"


def main_stack_name(cluster: Cluster) -> str:
    """The main stack is named after the cluster's local id."""
    return cluster.local_id


def extra_stack_name(cluster: Cluster, stem: str) -> str:
    """A stack of `cf-manifests/`: `cf-manifests/etcd.yaml` gives `etcd-<local id>`."""
    return f"{stem}-{cluster.local_id}"


def node_pool_stack_name(cluster: Cluster, pool: str) -> str:
    """A node pool's stack: `nodepool-<pool>-<local id>`."""
    return f"{NODE_POOL_PREFIX}{pool}-{cluster.local_id}"
