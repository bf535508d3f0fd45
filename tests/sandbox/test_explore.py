"""`make sandbox`: the fleet stays up, the printed lines reach it, Ctrl-C stops it cleanly."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kubernetes import client, config

from tests.helpers.processes import read_until

pytestmark = pytest.mark.slow


def test_sandbox_prints_working_lines_and_stops_on_ctrl_c() -> None:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    process = subprocess.Popen([sys.executable, "-m", "clmgit_sandbox.explore"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        out = read_until(process, "Ctrl-C here stops", timeout=180)
        exports = dict(pair.split("=", 1) for line in re.findall(r"^\s*export (.+)$", out, re.M)
                       for pair in line.split())
        assert exports.pop("PATH").endswith(":$PATH")  # the shell expands it; we need not
        kubeconfig = Path(exports["KUBECONFIG"])
        repo = Path(re.search(r"^\s*cd (\S+)$", out, re.M).group(1))  # type: ignore[union-attr]  # the output has the line
        assert exports["AWS_ENDPOINT_URL"].startswith("http://127.0.0.1:")
        assert (repo / "clusters.yaml").exists()

        api = config.new_client_from_config(str(kubeconfig))  # the current context: dev-1
        nodes = client.CoreV1Api(api).list_node().items
        assert nodes and all(n.status.node_info.kubelet_version for n in nodes)
        deployments = client.AppsV1Api(api).list_deployment_for_all_namespaces().items
        assert deployments, "reconcile applied no Deployment"
        status = subprocess.run([sys.executable, "-m", "clmgit", "status"], cwd=repo,
                                env={**env, **exports}, capture_output=True, text=True)
        assert status.returncode == 0 and "in-sync" in status.stdout
        again = subprocess.run([sys.executable, "-m", "clmgit", "reconcile"], cwd=repo,
                               env={**env, **exports}, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr  # the kubeconfig came from the environment
    finally:
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=60)[0].decode()
    assert process.returncode == 0, rest
    assert "Stopped" in rest
    assert not kubeconfig.exists() and not repo.exists()
