"""The end-to-end tests' world (the fixtures are in tests/reconcile/conftest.py): a real config
repo (the sandbox `cluster/` tree), moto in server mode, and per cluster a Kubernetes API emulator
with its node simulator; clmgit runs through its CLI."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from clmgit_sandbox.aws import REGION
from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record
from clmgit_sandbox.configtree import cluster_tree
from clmgit_sandbox.fleet import LocalFleet

from clmgit.model import Cluster
from clmgit.registry import Registry, open_registry
from tests.helpers.aws import all_stacks
from tests.helpers.cli import Result, run_cli


@dataclass
class Sandbox:
    builder: ConfigRepoBuilder
    kubeconfig: Path
    fleet: LocalFleet
    records: list[dict[str, Any]]
    versions: list[str] = field(default_factory=list)
    #: `--registry`: None for the clusters.yaml in the repo, else a server's URL.
    registry_spec: str | None = None

    @property
    def path(self) -> Path:
        return self.builder.path

    @property
    def registry(self) -> Registry:
        return open_registry(self.registry_spec, default_dir=self.path)

    def clusters(self) -> dict[str, Cluster]:
        return {c.alias: c for c in self.registry.clusters()}

    def reconcile(self, *args: str) -> Result:
        return self.cli("reconcile", "--kubeconfig", str(self.kubeconfig), *args)

    def cli(self, *args: str) -> Result:
        registry = ("--registry", self.registry_spec) if self.registry_spec else ()
        return run_cli("--repo", str(self.path), *registry, *args)

    def commit_version(self, version: int) -> str:
        """A new commit on dev (the unpinned channel the clusters follow) with that tree."""
        sha = self.builder.commit("dev", cluster_tree(version), f"Config version {version}")
        self.versions.append(sha)
        return sha

    def stacks(self, cluster: Cluster) -> list[str]:
        cf = boto3.Session(region_name=REGION).client("cloudformation")
        return sorted(s["StackName"] for s in all_stacks(cf)
                      if {t["Key"]: t["Value"] for t in s.get("Tags", [])}.get(
                          "clmgit/cluster-id") == cluster.id)


def make_records(count: int, **extra: Any) -> list[dict[str, Any]]:
    """Clusters new to moto (its state lives for the whole test session), following dev."""
    suffix = uuid.uuid4().hex[:6]
    records = []
    for n in range(count):
        alias = f"e2e-{suffix}-{n}"
        record = cluster_record(f"aws:123456789012:{REGION}:{alias}", channel="dev",
                                alias=alias, lifecycle_status="requested", **extra)
        # The sandbox's waits, short: the node simulator answers within 50 ms.
        record["config_items"] = {"drain_poll_interval": "0.1s"}
        records.append(record)
    return records
