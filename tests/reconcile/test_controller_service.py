"""`clmgit controller` as a service: /healthz, /readyz and /metrics of the real process on the
sandbox world (moto, an emulator per cluster), and its `--log-format json` lines."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.processes import read_until
from tests.helpers.scrape import free_port, get, samples, value

pytestmark = pytest.mark.slow  # end to end: a real controller, moto and the emulator


def _wait(check, timeout: float = 60):
    """`check()`'s first true value within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
    return found


def test_the_controller_serves_metrics_health_and_readiness(sandbox_factory, tmp_path: Path):
    sandbox = sandbox_factory(2)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    stderr = (tmp_path / "stderr").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "clmgit", "--repo", str(sandbox.path), "--log-format", "json",
         "controller", "--interval", "3s", "--kubeconfig", str(sandbox.kubeconfig),
         "--processes", "2", "--metrics-port", str(port)],
        stdout=subprocess.PIPE, stderr=stderr)
    try:
        first = json.loads(read_until(proc, "\n", timeout=120))
        assert first["summary"] == {"clusters": 2, "applied": 2}, first
        # Live and ready once the round is recorded (the JSON line comes just before).
        _wait(lambda: get(f"{base}/readyz") == (200, "ok\n"))
        assert get(f"{base}/healthz") == (200, "ok\n")
        found = samples(base)
        # Counters moved for the round that created both clusters.
        assert value(found, "clmgit_cluster_updates_total", outcome="applied") == 2
        assert value(found, "clmgit_cluster_updates_total", outcome="failed") == 0
        assert value(found, "clmgit_lease_events_total", event="acquired") == 2
        assert value(found, "clmgit_rounds_total", result="ok") >= 1
        assert value(found, "clmgit_step_failures_total", step="stacks") == 0
        assert value(found, "clmgit_last_successful_round_timestamp_seconds") > time.time() - 300
        buckets = [labels for (name, labels) in found
                   if name == "clmgit_round_duration_seconds_bucket"]
        assert len(buckets) > 5 and frozenset({("le", "+Inf")}) in buckets
        assert value(found, "clmgit_round_duration_seconds_count") >= 1
        states = {dict(labels)["state"]: v for (name, labels), v in found.items()
                  if name == "clmgit_clusters" and dict(labels)["channel"] == "dev"}
        assert sum(states.values()) == 2 and set(states) <= {"applied", "in-sync"}

        # The config repo goes away: the next round fails, the process is not ready but live.
        moved = sandbox.path.rename(tmp_path / "elsewhere")
        _wait(lambda: get(f"{base}/readyz")[0] == 503)
        status, why = get(f"{base}/readyz")
        assert why.startswith("the last round failed: ")
        assert get(f"{base}/healthz")[0] == 200
        assert value(samples(base), "clmgit_rounds_total", result="failed") >= 1
        moved.rename(sandbox.path)
        _wait(lambda: get(f"{base}/readyz")[0] == 200)

        # A new commit rolls both clusters' nodes in the engine's worker processes; what they
        # count reaches the controller's metrics.
        sandbox.commit_version(2)
        _wait(lambda: value(samples(base), "clmgit_cluster_updates_total",
                            outcome="applied") == 4, timeout=180)
        found = samples(base)
        assert value(found, "clmgit_nodes_replaced_total") == 2
        assert value(found, "clmgit_lease_events_total", event="acquired") == 4

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()
    stderr.seek(0)
    lines = [json.loads(line) for line in stderr.read().splitlines()]
    assert lines, "a failed round is logged"
    assert all({"time", "level", "message"} <= set(line) for line in lines)
    assert any(line["level"] == "error" and "reconcile round failed" in line["message"]
               for line in lines)
