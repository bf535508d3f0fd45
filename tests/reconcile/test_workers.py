"""The engine's worker processes: calls run in forked workers, answers and errors come back as
they were, a dead worker fails its callers instead of hanging them, and no worker outlives its
parent."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest

from clmgit.engine.port import ChangeReport as Report
from clmgit.errors import ApplyError, ConfigError
from clmgit.model import Cluster
from clmgit.reconcile.workers import engine_workers, forwarded_events


@dataclass
class Answer:
    changes: list[str] = field(default_factory=list)


class Unpicklable(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.lock = threading.Lock()  # locks do not pickle


class ScriptedEngine:
    """Does what the SHA says, and answers with the pid that did it."""

    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> Answer:
        if sha == "config-error":
            raise ConfigError(f"{cluster.id}: bad template")
        if sha == "unpicklable":
            raise Unpicklable("held a lock")
        if sha == "die":
            os._exit(7)
        if sha == "hang":
            time.sleep(3600)
        return Answer([f"{cluster.id} {sha} dry={dry_run} pid={os.getpid()}"])

    def decommission(self, cluster: Cluster, *, dry_run: bool = False) -> Answer:
        return Answer([f"decommissioned {cluster.id} pid={os.getpid()}"])


def make_cluster(id: str) -> Cluster:
    return Cluster(id=id, region="eu-central-1")


def pid_of(answer: Report) -> int:
    return int(answer.changes[0].rsplit("pid=", 1)[1])


def test_one_process_is_the_engine_itself() -> None:
    engine = ScriptedEngine()
    with engine_workers(engine, processes=1, threads=4) as pooled:
        assert pooled is engine


def test_calls_run_in_worker_processes_and_answers_come_back() -> None:
    cluster = make_cluster("a")
    with engine_workers(ScriptedEngine(), processes=2, threads=2) as pooled:
        with ThreadPoolExecutor(8) as calls:
            answers = list(calls.map(lambda n: pooled.apply(cluster, f"sha{n}", dry_run=True),
                                     range(16)))
        gone = pooled.decommission(cluster)
    assert [a.changes[0].split(" pid=")[0] for a in answers] == [
        f"a sha{n} dry=True" for n in range(16)]
    assert os.getpid() not in {pid_of(a) for a in answers}
    assert gone.changes[0].startswith("decommissioned a ")


def test_errors_cross_back_as_raised_or_as_their_text() -> None:
    cluster = make_cluster("a")
    with engine_workers(ScriptedEngine(), processes=2, threads=1) as pooled:
        with pytest.raises(ConfigError, match="^a: bad template$"):
            pooled.apply(cluster, "config-error")
        with pytest.raises(ApplyError, match="^Unpicklable: held a lock$"):
            pooled.apply(cluster, "unpicklable")
        # the workers are still there for the next call
        assert pooled.apply(cluster, "ok").changes[0].startswith("a ok ")


def test_a_dead_worker_fails_every_waiting_call() -> None:
    cluster = make_cluster("a")
    with engine_workers(ScriptedEngine(), processes=2, threads=1) as pooled:
        with ThreadPoolExecutor(2) as calls:
            hanging = calls.submit(pooled.apply, cluster, "hang")
            dying = calls.submit(pooled.apply, cluster, "die")
            for future in (dying, hanging):
                with pytest.raises(ApplyError, match="worker process died .*exited with 7"):
                    future.result(timeout=60)
        with pytest.raises(ApplyError, match="stopping"):
            pooled.apply(cluster, "ok")


def test_workers_exit_when_their_parent_is_killed() -> None:
    """A run killed with SIGKILL leaves no engine work going on: its orphaned workers exit."""
    read, write = os.pipe()
    parent = os.fork()
    if parent == 0:  # the run that gets killed
        os.close(read)
        with engine_workers(ScriptedEngine(), processes=2, threads=1) as pooled:
            pids = {pid_of(pooled.apply(make_cluster("a"), "ok")) for _ in range(20)}
            os.write(write, " ".join(map(str, pids)).encode() + b"\n")
            time.sleep(3600)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        workers = [int(p) for p in pipe.readline().split()]
    assert workers
    os.kill(parent, signal.SIGKILL)
    os.waitpid(parent, 0)
    deadline = time.monotonic() + 30
    while (alive := [p for p in workers if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive == []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie that init has not reaped yet is gone for our purpose
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ", 1)[1][0] != "Z"


@dataclass
class TellingEngine(ScriptedEngine):
    """Tells a sink what it does, from whichever process runs it."""

    tell: Callable[[str, str], None]

    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> Answer:
        self.tell(cluster.id, f"working in {os.getpid()}")
        return super().apply(cluster, sha, dry_run=dry_run)


def test_events_from_worker_processes_reach_the_parent() -> None:
    heard: list[tuple[str, str]] = []
    with forwarded_events(lambda cluster_id, text: heard.append((cluster_id, text))) as tell, \
            engine_workers(TellingEngine(tell), processes=2, threads=1) as pooled:
        answer = pooled.apply(make_cluster("a"), "sha")

    assert heard == [("a", f"working in {pid_of(answer)}")]
    assert pid_of(answer) != os.getpid()


def test_workers_leave_sigint_to_the_parent() -> None:
    with engine_workers(ScriptedEngine(), processes=2, threads=1) as pooled:
        first = pooled.apply(make_cluster("a"), "sha")
        os.kill(pid_of(first), signal.SIGINT)  # a terminal's Ctrl-C reaches every process
        # A worker killed by it would fail every call within a poll (0.1 s); go on for 1 s.
        served = 0
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            assert pooled.apply(make_cluster("a"), f"sha{served}").changes
            served += 1

    assert served > 0
