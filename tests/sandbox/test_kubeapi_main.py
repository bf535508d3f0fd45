"""`python -m clmgit_sandbox.kubeapi`: standalone, with a kubeconfig, stopped by SIGTERM."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from kubernetes import client, config


def test_standalone_server_writes_a_kubeconfig_and_serves(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clmgit_sandbox.kubeapi",
            "--port",
            "0",
            "--kubeconfig",
            str(path),
            "--context",
            "c1",
            "--context",
            "c2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert "https://127.0.0.1:" in banner and str(path) in banner
        for context in ("c1", "c2"):
            core = client.CoreV1Api(config.new_client_from_config(str(path), context=context))
            assert "kube-system" in [n.metadata.name for n in core.list_namespace().items]
    finally:
        process.terminate()
        out, err = process.communicate(timeout=10)
    assert process.returncode == 0, err
    token = yaml.safe_load(path.read_text())["users"][0]["user"]["token"]
    assert len(token) >= 20 and token not in banner + out + err  # secrets stay out of the output
