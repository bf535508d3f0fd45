"""End-to-end fixtures: a real config repo (the sandbox `cluster/` tree), moto in server mode, and
per cluster a Kubernetes API emulator with its node simulator; clmgit runs through its CLI
(tests/helpers/sandbox.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from clmgit_sandbox.configrepo import ConfigRepoBuilder, example_channels
from clmgit_sandbox.configtree import cluster_tree
from clmgit_sandbox.fleet import LocalFleet

from clmgit.model import parse_cluster
from clmgit.registry.file import clusters_yaml
from tests.helpers.sandbox import Sandbox, make_records


@pytest.fixture
def sandbox_factory(moto_endpoint: str, tmp_path: Path, make_registry) -> Iterator:
    """`make(count, backend)`: a sandbox of `count` new clusters whose registry is the repo's
    clusters.yaml ("file") or a registry server ("sqlite", "postgresql"); `edit` may change
    the records first."""
    fleets: list[LocalFleet] = []

    def make(count: int = 1, backend: str = "file", edit=None) -> Sandbox:
        b = ConfigRepoBuilder(tmp_path / f"config{len(fleets)}")
        v1 = b.commit("dev", cluster_tree(1), "Config version 1")
        for channel in ("alpha", "beta", "stable"):
            b.git("branch", channel, v1)
        records = make_records(count)
        if edit:
            edit(records)
        spec = None if backend == "file" else make_registry(backend, records)
        b.commit("main", {**example_channels(), "clusters.yaml": clusters_yaml(records)},
                 "Channels and clusters")
        clusters = [parse_cluster(r, "record") for r in records]
        fleet = LocalFleet(clusters, tmp_path / f"kubeconfig{len(fleets)}").start()
        fleets.append(fleet)
        return Sandbox(b, fleet.kubeconfig, fleet, records, [v1], spec)

    yield make
    for fleet in fleets:
        fleet.stop()


@pytest.fixture
def sandbox(sandbox_factory) -> Sandbox:
    return sandbox_factory(1)
