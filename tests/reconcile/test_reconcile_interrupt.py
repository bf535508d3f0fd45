"""Ctrl-C during a real reconcile (a `python -m clmgit` process) stuck in a rolling update whose
new node never becomes Ready (the cluster's node simulator is stopped): the first SIGINT stops
the run within seconds, says what it waits for and gives the lease up; a second one aborts."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from clmgit.model import Cluster, desired_version

pytestmark = pytest.mark.slow  # end to end: a real process, moto and the emulator

WAITING = "pool default-worker: waiting for 1 new node(s) (i-"
STOPS_WITHIN = 20.0  # seconds, on a loaded machine


class Run:
    """A reconcile process whose stderr is read line by line as it comes."""

    def __init__(self, sandbox) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "clmgit", "--repo", str(sandbox.path), "reconcile",
             "--kubeconfig", str(sandbox.kubeconfig)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._lines.put(line)
        self._lines.put(None)

    def wait_for_line(self, text: str, *, within: float) -> str:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=0.5)
            except queue.Empty:
                continue
            assert line is not None, f"exited {self.proc.wait()}: {''.join(self.err)}"
            self.err.append(line)
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} in {within}s: {''.join(self.err)}")

    def finish(self, *, within: float) -> tuple[int, str, str]:
        """The exit code, awaited for at most `within` seconds, stdout and all of stderr."""
        code = self.proc.wait(timeout=within)
        while (line := self._lines.get(timeout=10)) is not None:
            self.err.append(line)
        assert self.proc.stdout is not None
        return code, self.proc.stdout.read(), "".join(self.err)


def stuck_rolling_update(sandbox) -> tuple[Cluster, str, Run]:
    """The cluster at version 1; a run to version 2 waiting for its new node, forever."""
    assert sandbox.reconcile().code == 0
    [cluster] = sandbox.registry.clusters()
    sandbox.fleet.kubelets[cluster.id].stop()
    sha = sandbox.commit_version(2)
    run = Run(sandbox)
    line = run.wait_for_line(WAITING, within=180)
    assert line.startswith(f"{cluster.id}: ")  # not a terminal: one line per event
    assert line.rstrip().endswith("to be Ready, 0s of 900s")
    return cluster, sha, run


def test_sigint_stops_the_run_and_gives_up_the_lease(sandbox):
    cluster, sha, run = stuck_rolling_update(sandbox)

    run.proc.send_signal(signal.SIGINT)
    code, out, err = run.finish(within=STOPS_WITHIN)

    assert code == 130, err
    [row] = [line.split() for line in out.splitlines() if line.startswith(cluster.alias)]
    assert row[1:3] == ["update", "stopped"]  # the results table, as far as the run got
    [said] = [line for line in err.splitlines() if line.startswith("interrupted: stopping")]
    assert f"waiting for {cluster.id} ({WAITING}" in said
    assert f"interrupted: stopped {cluster.alias}; leases given up" in err
    [now] = sandbox.registry.clusters()
    assert now.status.next_version == desired_version(sha, cluster)  # the next run resumes
    assert now.status.problems == cluster.status.problems  # a stop is not a problem
    assert sandbox.registry.acquire(cluster.id, "another-run", 60) is not None  # lease free


def test_a_second_signal_aborts_at_once(sandbox):
    _, _, run = stuck_rolling_update(sandbox)

    # Back to back, so that the second comes before the orderly stop ends; SIGTERM is the first.
    run.proc.send_signal(signal.SIGTERM)
    run.proc.send_signal(signal.SIGINT)
    code, _, err = run.finish(within=STOPS_WITHIN)

    assert code == 130, err
    # (Whether the first signal's "interrupted: stopping" line came out before the second one
    # ended the process depends on where the handlers ran; the abort always says why.)
    assert "aborted: clusters being worked on keep their leases until they expire" in err


# -- what a stop leaves: no new destructive step, the lease given up in time -------------------

LEASE_FREE_WITHIN = 15.0  # seconds from the signal to the lease free for another reconciler


def lease_freed_within(sandbox, cluster: Cluster, seconds: float) -> float:
    """Seconds until another reconciler can take the cluster's lease (taken and given back)."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if sandbox.registry.acquire(cluster.id, "another-run", 60) is not None:
            sandbox.registry.record(cluster.id, "another-run", release=True)
            return time.monotonic() - start
        time.sleep(0.2)
    raise AssertionError(f"the lease of {cluster.id} was not given up within {seconds}s")


def a_pod_on_its_node(sandbox, cluster: Cluster) -> tuple[str, str]:
    """A pod on the cluster's one node, which a drain of that node evicts. The node's name and
    its instance."""
    from clmgit_sandbox.kubeapi.fixtures import make_pod, make_replicaset

    server = sandbox.fleet.server(cluster.alias)
    [node] = server.objects("v1", "Node")
    rs = server.seed(make_replicaset("app", labels={"app": "app"}))[0]
    server.seed(make_pod("app-1", node=node["metadata"]["name"], labels={"app": "app"},
                         owners=[rs]))
    return node["metadata"]["name"], node["spec"]["providerID"].rsplit("/", 1)[-1]


def instance_state(instance_id: str) -> str:
    import boto3

    ec2 = boto3.client("ec2", region_name="eu-central-1")
    [reservation] = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
    return str(reservation["Instances"][0]["State"]["Name"])


def echo_image(sandbox, cluster: Cluster) -> str:
    server = sandbox.fleet.server(cluster.alias)
    [echo] = [d for d in server.objects("apps/v1", "Deployment")
              if d["metadata"]["name"] == "echo"]
    return str(echo["spec"]["template"]["spec"]["containers"][0]["image"])


def test_sigint_during_a_drain_starts_no_destructive_step(sandbox, monkeypatch):
    from clmgit_sandbox.kubeapi import writes

    assert sandbox.reconcile().code == 0
    [cluster] = sandbox.registry.clusters()
    node, instance = a_pod_on_its_node(sandbox, cluster)
    image = echo_image(sandbox, cluster)
    sha = sandbox.commit_version(2)
    evicting, answer = threading.Event(), threading.Event()
    evict = writes.evict

    def slow_evict(cluster, namespace, name, body, dry_run):
        # The eviction of the drain is answered only after the signal: the drain then ends
        # without another wait, where a stop used to be noticed only.
        if name == "app-1":
            evicting.set()
            answer.wait(60)
        return evict(cluster, namespace, name, body, dry_run)

    monkeypatch.setattr(writes, "evict", slow_evict)
    run = Run(sandbox)
    try:
        assert evicting.wait(180), f"no drain of {node}: {''.join(run.err)}"
        run.proc.send_signal(signal.SIGINT)
        run.wait_for_line("interrupted: stopping", within=10)
    finally:
        answer.set()
    freed = lease_freed_within(sandbox, cluster, LEASE_FREE_WITHIN)
    code, _, err = run.finish(within=STOPS_WITHIN)

    assert code == 130, err
    assert f"interrupted: stopped {cluster.alias}; leases given up, the next run resumes" in err
    assert instance_state(instance) == "running"  # not terminated
    assert echo_image(sandbox, cluster) == image  # version 2's manifests not applied
    server = sandbox.fleet.server(cluster.alias)
    assert server.read("v1", "ConfigMap", "legacy-settings", "platform") is not None
    [now] = sandbox.registry.clusters()
    assert now.status.next_version == desired_version(sha, cluster)  # resumed next time
    assert now.status.current_version == cluster.status.current_version  # not applied
    assert now.status.problems == cluster.status.problems
    assert freed < LEASE_FREE_WITHIN


def test_sigint_during_a_hung_cloud_call_gives_the_lease_up_in_time(sandbox, monkeypatch):
    from moto.core.responses import BaseResponse

    assert sandbox.reconcile().code == 0
    [cluster] = sandbox.registry.clusters()
    sha = sandbox.commit_version(2)
    hanging, release = threading.Event(), threading.Event()
    answer = BaseResponse.call_action

    def call_action(self):  # in the test's moto: the run's CloudFormation calls never answer
        if "app/hang-me" in self.headers.get("User-Agent", "") and (
                self.service_name == "cloudformation"):
            hanging.set()
            release.wait(120)
        return answer(self)

    monkeypatch.setattr(BaseResponse, "call_action", call_action)
    monkeypatch.setenv("AWS_SDK_UA_APP_ID", "hang-me")  # only the run's process says so
    run = Run(sandbox)
    monkeypatch.delenv("AWS_SDK_UA_APP_ID")
    try:
        assert hanging.wait(180), "the run made no CloudFormation call"

        run.proc.send_signal(signal.SIGINT)
        freed = lease_freed_within(sandbox, cluster, LEASE_FREE_WITHIN)
        code, _, err = run.finish(within=STOPS_WITHIN)
    finally:
        release.set()

    assert code == 130, err
    assert "abandoned a call to the cloud or the cluster" in err
    [now] = sandbox.registry.clusters()
    assert now.status.next_version == desired_version(sha, cluster)
    assert now.status.current_version == cluster.status.current_version
    assert freed < LEASE_FREE_WITHIN
