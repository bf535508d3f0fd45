"""`clmgit controller`: rounds of reconcile until SIGTERM, as a real process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record

from clmgit.model import desired_version, parse_cluster
from clmgit.registry.file import clusters_yaml

pytestmark = pytest.mark.slow  # end to end: real processes, moto and the emulator


def test_the_controller_reconciles_in_rounds_and_stops_cleanly_on_sigterm(tmp_path):
    b = ConfigRepoBuilder(tmp_path / "config")
    sha = b.commit("dev", {"cluster/stack.yaml": "Resources: {}\n"}, "Config")
    record = cluster_record("aws:123456789012:eu-central-1:c1", channel="dev")
    record["status"]["current_version"] = desired_version(sha, parse_cluster(record, "c1"))
    b.commit("main", {"channels/dev.yaml": "channel: dev\nbranch: dev\n",
                      "clusters.yaml": clusters_yaml([record])}, "Clusters")
    proc = subprocess.Popen(
        [sys.executable, "-m", "clmgit", "--repo", str(b.path), "controller", "--interval", "1s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        rounds = [json.loads(proc.stdout.readline()) for _ in range(2)]  # type: ignore[union-attr]  # PIPE
        assert rounds == [{"apiVersion": "clmgit/v1", "kind": "ControllerRound", "items": [],
                           "summary": {"clusters": 1, "in-sync": 1}, "errors": []}] * 2
        proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - started < 5  # it stops during the pause, not after it
    finally:
        proc.kill()
