"""A fleet for lease and fault tests: a real config repo (the sandbox's `cluster/` tree at several
versions, channel `beta` pinned), a real registry server (on PostgreSQL in the tests that need
it), and reconcilers that run `clmgit.reconcile.session.reconcile` — what the CLI's `reconcile`
and each controller round call — on the in-memory backends, so that many of them can run at once
on this small machine. Every engine apply and every backend call is recorded, with hooks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record
from clmgit_sandbox.configtree import cluster_tree
from clmgit_sandbox.memorycloud import memory_backends

from clmgit.engine.cluster import Backends, Engine
from clmgit.model import Cluster, desired_version
from clmgit.reconcile.run import Result
from clmgit.reconcile.session import Options, reconcile
from clmgit.workspace import Workspace, open_workspace


def records(count: int) -> list[dict[str, Any]]:
    return [cluster_record(f"aws:123456789012:eu-central-1:lease-{i}", channel="beta",
                           alias=f"lease-{i}", lifecycle_status="ready") for i in range(count)]


@dataclass
class Apply:
    cluster_id: str
    sha: str
    started: float
    ended: float = 0.0


@dataclass
class Recorder:
    """What every engine did: applies (cluster, SHA, thread's holder) and backend calls."""

    applies: list[Apply] = field(default_factory=list)
    calls: list[tuple[str, str, float]] = field(default_factory=list)  # cluster, method, when
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Called with (cluster id, method) before each backend call reaches the in-memory double.
    on_call: Callable[[str, str], None] = lambda cluster_id, method: None

    def applied(self, cluster_id: str) -> list[str]:
        return [a.sha for a in self.applies if a.cluster_id == cluster_id]


class _Recording:
    """A backend double that records each call (after the engine's lease guard let it pass)."""

    def __init__(self, target: object, cluster_id: str, recorder: Recorder) -> None:
        self._target, self._id, self._recorder = target, cluster_id, recorder

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name.startswith("_") or not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            self._recorder.on_call(self._id, name)
            with self._recorder.lock:
                self._recorder.calls.append((self._id, name, time.monotonic()))
            return value(*args, **kwargs)

        return call


class World:
    def __init__(self, tmp: Path, registry_url: str, count: int = 3) -> None:
        self.builder = ConfigRepoBuilder(tmp / "config")
        self.versions = [self.builder.commit("beta", cluster_tree(v), f"Config version {v}")
                         for v in (1, 2, 3)]
        for channel in ("dev", "alpha", "stable"):
            self.builder.git("branch", channel, self.versions[0])
        self.pin(self.versions[0])
        self.url = registry_url
        self.recorder = Recorder()
        self._backends: dict[str, Backends] = {}
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        return self.builder.path

    def pin(self, sha: str, message: str = "promote") -> None:
        """Pin channel beta's one group to `sha` on the control branch."""
        channels = {f"channels/{c}.yaml": yaml.safe_dump({"channel": c, "branch": c})
                    for c in ("dev", "alpha", "stable")}
        channels["channels/beta.yaml"] = yaml.safe_dump(
            {"channel": "beta", "branch": "beta", "groups": [{"name": "default", "sha": sha}]},
            sort_keys=False)
        self.builder.commit("main", channels, message)

    def backends(self, cluster: Cluster) -> Backends:
        with self._lock:
            if cluster.id not in self._backends:  # one simulated cloud per cluster
                self._backends[cluster.id] = memory_backends(cluster)
            real = self._backends[cluster.id]
        r = self.recorder
        return Backends(_Recording(real.stacks, cluster.id, r),
                        _Recording(real.pools, cluster.id, r),
                        _Recording(real.kube, cluster.id, r), real.values)

    def run(self, *, holder: str | None = None,
            prepare: Callable[[Workspace], None] = lambda ws: None,
            **options: Any) -> list[Result]:
        """One reconcile of every cluster, as `clmgit reconcile` (or a controller round);
        `prepare` may hook the workspace (its registry) first."""
        ws = open_workspace(str(self.path), registry=self.url)
        prepare(ws)
        return reconcile(ws, Options(backends=self.backends, processes=1, holder=holder,
                                     **options))

    def desired(self, cluster: Cluster, sha: str) -> str:
        return desired_version(sha, cluster)


def record_applies(monkeypatch: Any, recorder: Recorder) -> None:
    """Every `Engine.apply` (not a dry run's) recorded with its cluster, SHA and times."""
    original = Engine.apply

    def apply(self: Engine, cluster: Cluster, sha: str, *, dry_run: bool = False) -> Any:
        entry = Apply(cluster.id, sha, time.monotonic())
        try:
            return original(self, cluster, sha, dry_run=dry_run)
        finally:
            entry.ended = time.monotonic()
            if not dry_run:
                with recorder.lock:
                    recorder.applies.append(entry)

    monkeypatch.setattr(Engine, "apply", apply)
