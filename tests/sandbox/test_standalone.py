"""The sandbox's parts run by hand, as a user builds a world without `make sandbox`:
`python -m clmgit_sandbox.aws` (moto with clmgit's patches), `python -m clmgit_sandbox.kubeapi
--nodes` (an emulator with the node simulator), kubeconfigs that merge, and `clmgit reconcile`
creating a cluster, node pool included, against them."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from clmgit_sandbox.configrepo import init_example_repo
from kubernetes import client, config

from tests.helpers.processes import read_until, stop

pytestmark = pytest.mark.slow


def _start(*args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env)


@pytest.fixture
def aws_env() -> Iterator[dict[str, str]]:
    """`python -m clmgit_sandbox.aws` running; the environment its banner says to export."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "KUBECONFIG"))}
    moto = _start("clmgit_sandbox.aws", "--port", "0", env=env)
    try:
        banner = read_until(moto, "AWS_DEFAULT_REGION=", timeout=60)
        exports = re.search(r"^export (.+)$", banner, re.M)
        assert exports, banner
        yield {**env, **dict(pair.split("=", 1) for pair in exports.group(1).split())}
    finally:
        rest = stop(moto, signal.SIGTERM)
    assert moto.returncode == 0, rest


def test_reconcile_creates_a_cluster_on_the_standalone_processes(tmp_path: Path,
                                                                 aws_env: dict[str, str]) -> None:
    repo = init_example_repo(tmp_path / "config").path
    kubeconfig = tmp_path / "dev-1.kubeconfig"
    emulator = _start("clmgit_sandbox.kubeapi", "--kubeconfig", str(kubeconfig), "--context",
                      "dev-1", "--nodes", str(repo / "clusters.yaml"), env=aws_env)
    try:
        assert "nodes of dev-1 simulated" in read_until(emulator, "\n", timeout=60)
        reconcile = subprocess.run(
            [sys.executable, "-m", "clmgit", "--repo", str(repo), "reconcile", "--cluster",
             "dev-1", "--kubeconfig", str(kubeconfig)],
            env=aws_env, capture_output=True, text=True, timeout=600)
        assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr
        api = config.new_client_from_config(str(kubeconfig), context="dev-1")
        nodes = client.CoreV1Api(api).list_node().items
        assert [n.metadata.labels["node.kubernetes.io/node-pool"] for n in nodes] == [
            "default-worker"]
    finally:
        rest = stop(emulator, signal.SIGTERM)
    assert emulator.returncode == 0, rest


def test_kubeconfigs_of_two_emulators_merge(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    paths = [tmp_path / f"{name}.kubeconfig" for name in ("a", "b")]
    emulators = [_start("clmgit_sandbox.kubeapi", "--kubeconfig", str(path), "--context",
                        path.stem, env=env) for path in paths]
    try:
        for emulator in emulators:
            read_until(emulator, "kubeconfig written", timeout=60)
        merged = os.pathsep.join(str(p) for p in paths)  # as KUBECONFIG=a:b merges them
        for name in ("a", "b"):
            core = client.CoreV1Api(config.new_client_from_config(merged, context=name))
            assert "kube-system" in [n.metadata.name for n in core.list_namespace().items]
    finally:
        for emulator in emulators:
            stop(emulator, signal.SIGHUP)
    assert [e.returncode for e in emulators] == [0, 0]
