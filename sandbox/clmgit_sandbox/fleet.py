"""Clusters brought to life on this machine, for end-to-end tests and the demo.

Each cluster gets its own Kubernetes API emulator on 127.0.0.1 and a node simulator
(`Kubelet`) that keeps the emulator's nodes in step with the cluster's instances in moto; one
kubeconfig holds a context per cluster, named after its alias, as `--kubeconfig` expects. AWS is
moto (`clmgit_sandbox.aws.moto_server`), started by the caller because it is shared.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import boto3

from clmgit.adapters.aws.autoscaling import AutoScalingPools
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster
from clmgit_sandbox.aws import moto_changes
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.kubeconfig import document, named_entries, write_kubeconfig
from clmgit_sandbox.kubelet import Kubelet


class LocalFleet:
    def __init__(self, clusters: Sequence[Cluster], kubeconfig: Path, *,
                 layout: Layout = DEFAULT) -> None:
        self.clusters = list(clusters)
        self.layout = layout  # where the simulator finds a pool's instances
        self.kubeconfig = kubeconfig
        self.servers: dict[str, KubeAPIServer] = {}  # by cluster id
        self.kubelets: dict[str, Kubelet] = {}

    def start(self) -> LocalFleet:
        for cluster in self.clusters:
            server = KubeAPIServer()
            server.start()
            self.servers[cluster.id] = server
            pools = AutoScalingPools(boto3.Session(region_name=cluster.region),
                                     layout=self.layout)
            self.kubelets[cluster.id] = Kubelet(server, pools, cluster,
                                                cloud_changes=moto_changes()).start()
        self._write_kubeconfig()
        return self

    def stop(self) -> None:
        for kubelet in self.kubelets.values():
            kubelet.stop()
        for server in self.servers.values():
            server.stop()
        self.kubelets.clear()
        self.servers.clear()

    def __enter__(self) -> LocalFleet:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def server(self, name: str) -> KubeAPIServer:
        """A cluster's emulator, by id or alias."""
        for cluster in self.clusters:
            if name in (cluster.id, cluster.alias):
                return self.servers[cluster.id]
        raise KeyError(name)

    def _write_kubeconfig(self) -> None:
        entries = []
        for cluster in self.clusters:
            server = self.servers[cluster.id]
            entries.append(named_entries(cluster.alias or cluster.local_id, server.url,
                                         server.token, ca_pem=server.ca_pem))
        write_kubeconfig(self.kubeconfig, document(entries))
