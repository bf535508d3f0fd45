"""SIGKILL at many points of a real reconcile (a `python -m clmgit` process), then a new run:
every cluster ends at its desired version, with no duplicate stacks, no lost registry data, no
node left cordoned, and no outdated instance.

Deterministic under load (moto shim 6 serialises CloudFormation requests; before it, a reader of
a stack mid-ExecuteChangeSet made moto create duplicate Auto Scaling groups). Checked with both
cores kept busy by another process:

    ( for c in 1 2; do timeout 1800 sh -c 'while :; do :; done' & done
      for i in $(seq 10); do .venv/bin/python -m pytest -p no:xdist -q \
          tests/reconcile/test_reconcile_sigkill.py || exit 1; done )
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import boto3
import pytest
import yaml
from clmgit_sandbox.aws import REGION

from clmgit.model import desired_version
from tests.helpers.aws import all_groups

pytestmark = pytest.mark.slow  # end to end: real processes, moto and the emulator

#: Kill points, spread from start-up to past the end of a full run. 8 in the suite; a soak run
#: takes more (CLMGIT_SIGKILL_POINTS=40), since each point costs two whole runs.
KILLS = int(os.environ.get("CLMGIT_SIGKILL_POINTS", "8"))
STATUS_FIELDS = ("status", "lifecycle_status")


def command(sandbox) -> list[str]:
    return [sys.executable, "-m", "clmgit", "--repo", str(sandbox.path), "reconcile",
            "--kubeconfig", str(sandbox.kubeconfig), "--concurrency", "2"]


def phase(sandbox, sha: str) -> str:
    """Where the killed run was, as the registry tells: not started, working, or done."""
    clusters = sandbox.registry.clusters()
    if all(c.status.current_version == desired_version(sha, c) for c in clusters):
        return "done"
    if any(c.status.next_version for c in clusters):
        return "working"
    return "not started"


def check_converged(sandbox, sha: str, original_records: list[dict]) -> None:
    text = (sandbox.path / "clusters.yaml").read_text()
    assert text.startswith("# The cluster registry")
    records = yaml.safe_load(text)["clusters"]
    strip = [{k: v for k, v in r.items() if k not in STATUS_FIELDS} for r in records]
    assert strip == [{k: v for k, v in r.items() if k not in STATUS_FIELDS}
                     for r in original_records]  # no lost or changed registry data
    asg = boto3.Session(region_name=REGION).client("autoscaling")
    groups = all_groups(asg)
    for cluster in sandbox.registry.clusters():
        assert cluster.lifecycle_status == "ready"
        assert cluster.status.current_version == desired_version(sha, cluster)
        assert (cluster.status.next_version, cluster.status.problems) == ("", ())
        local = cluster.local_id
        assert sandbox.stacks(cluster) == sorted(
            [local, f"logs-{local}", f"nodepool-default-worker-{local}"])
        [group] = [g for g in groups if any(
            t["Key"] == f"kubernetes.io/cluster/{cluster.id}" for t in g.get("Tags", ()))]
        assert group["DesiredCapacity"] == 1
        nodes = sandbox.fleet.server(cluster.alias).objects("v1", "Node")
        assert not [n["metadata"]["name"] for n in nodes if n["spec"].get("unschedulable")]


def test_sigkill_anywhere_then_a_new_run_converges(sandbox_factory):
    sandbox = sandbox_factory(2)
    original = [dict(r) for r in sandbox.records]
    started = time.monotonic()
    first = subprocess.run(command(sandbox), capture_output=True, text=True)
    full_run = time.monotonic() - started
    assert first.returncode == 0, first.stderr
    check_converged(sandbox, sandbox.versions[0], original)

    phases = []
    for kill in range(KILLS):
        sha = sandbox.commit_version(2 if kill % 2 == 0 else 1)
        proc = subprocess.Popen(command(sandbox), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        # Kill points spread from start-up to past the end of a full run.
        time.sleep(0.2 + full_run * kill / (KILLS - 1))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        phases.append(phase(sandbox, sha))

        result = sandbox.reconcile("--concurrency", "2")
        assert result.code == 0, (kill, phases[-1], result.out, result.err)
        check_converged(sandbox, sha, original)
        assert not os.path.exists(sandbox.path / ".clusters.yaml.leases")

    # The kills really landed at different points of the run.
    assert {"not started", "working"} <= set(phases), phases
