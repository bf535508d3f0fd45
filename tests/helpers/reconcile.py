"""The reconcile protocol's world for unit tests: the real file registry, a fake engine that
records its calls, and every cluster pinned to SHA."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from clmgit_sandbox.configrepo import cluster_record

from clmgit.errors import ApplyError
from clmgit.model import Cluster
from clmgit.reconcile.plan import plan
from clmgit.reconcile.run import Reconciler
from clmgit.registry.file import FileRegistry, clusters_yaml

SHA = "c" * 40
OLD = "b" * 40


@dataclass
class FakeReport:
    changes: list[str] = field(default_factory=list)


@dataclass
class FakeEngine:
    fail: dict[str, str] = field(default_factory=dict)
    calls: list[tuple[str, str, bool]] = field(default_factory=list)

    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> FakeReport:
        self.calls.append(("apply", cluster.id, dry_run))
        if cluster.id in self.fail:
            raise ApplyError(self.fail[cluster.id])
        return FakeReport([f"applied {sha[:7]}"])

    def decommission(self, cluster: Cluster, *, dry_run: bool = False) -> FakeReport:
        self.calls.append(("decommission", cluster.id, dry_run))
        return FakeReport(["stacks deleted"])


def pin(cluster: Cluster) -> tuple[str | None, str]:
    return (SHA, "default") if cluster.channel != "nowhere" else (None, "unknown channel")


def make_registry(tmp_path: Path, records: list[dict]) -> FileRegistry:
    path = tmp_path / "clusters.yaml"
    path.write_text(clusters_yaml(records))
    return FileRegistry(path)


def record(name: str, channel: str = "dev", **extra) -> dict:
    return cluster_record(f"aws:123456789012:eu-central-1:{name}", channel=channel, **extra)


def run(reg: FileRegistry, engine: FakeEngine, *, dry_run: bool = False, **kwargs):
    targets = [plan(c, pin) for c in reg.clusters()]
    return Reconciler(reg, engine, dry_run=dry_run, **kwargs).run(targets, concurrency=2)
