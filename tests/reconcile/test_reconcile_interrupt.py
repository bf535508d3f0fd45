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
