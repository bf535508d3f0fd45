"""The engine's work on both cores: engine calls run in forked worker processes, each with a few
threads, while the registry protocol (leases, `next_version`, results) stays in the parent.

Rendering a cluster and a dry run on in-memory backends are CPU-bound, and threads of one
interpreter take turns on one core; a real run mostly waits on AWS and API servers, which
threads do well. So a run gets `processes` workers (one per usable core by default) and every
worker `threads` threads: as many calls are in flight as the run's concurrency, and the CPU work
of different clusters runs side by side. Workers compile templates into the shared cache
directory (`clmgit.config.compiled`), so a template is compiled once per machine, not once per
worker.

Workers are forked: they inherit the engine (and the backends a test or benchmark injected)
without pickling it; only the calls (a cluster and a SHA) and their answers (a report, or the
error raised) cross. A worker whose parent dies exits within a tenth of a second, so a killed
run leaves no engine work going on behind the next run's back.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import os
import pickle
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from typing import Any

import clmgit.events
from clmgit.engine.clock import StopSignal
from clmgit.engine.port import ChangeReport, ClusterEngine
from clmgit.errors import ApplyError, ClmgitError
from clmgit.machine import die_with_parent
from clmgit.model import Cluster

log = logging.getLogger(__name__)

_POLL = 0.1  # seconds: how often a worker checks its parent, and the parent its workers


@contextmanager
def engine_workers(engine: ClusterEngine, *, processes: int, threads: int,
                   stop: StopSignal | None = None) -> Iterator[ClusterEngine]:
    """`engine` itself for one process; else a stand-in whose calls run in `processes` forked
    workers of `threads` threads each, stopped when the block ends (at once if `stop` is set:
    what they still do then are calls the interrupted run abandoned)."""
    if processes <= 1:
        yield engine
        return
    pool = _Pool(engine, processes=processes, threads=max(1, threads), stop=stop)
    try:
        yield pool
    finally:
        pool.close()


class _Pool:
    """The parent's side: sends calls to the workers, and one thread hands their answers to the
    callers waiting for them."""

    def __init__(self, engine: ClusterEngine, *, processes: int, threads: int,
                 stop: StopSignal | None = None) -> None:
        context = multiprocessing.get_context("fork")
        self._stop = stop
        self._tasks: Any = context.Queue()
        self._answers: Any = context.Queue()
        self._pending: dict[int, Future[ChangeReport]] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._closing = False
        self._broken = False  # a worker died: the others' calls were failed, their work is moot
        self._threads = processes * threads
        self._workers: list[BaseProcess] = [
            context.Process(target=_serve, name=f"clmgit-engine-{n}", daemon=True,
                            args=(engine, self._tasks, self._answers, threads, os.getpid()))
            for n in range(processes)
        ]
        for worker in self._workers:
            worker.start()
        self._receiver = threading.Thread(target=self._receive, name="engine-answers",
                                          daemon=True)
        self._receiver.start()

    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False) -> ChangeReport:
        return self._call("apply", cluster, sha, dry_run=dry_run)

    def decommission(self, cluster: Cluster, *, dry_run: bool = False) -> ChangeReport:
        return self._call("decommission", cluster, dry_run=dry_run)

    def _call(self, method: str, *args: Any, **kwargs: Any) -> ChangeReport:
        future: Future[ChangeReport] = Future()
        with self._lock:
            if self._closing:
                raise ApplyError("the engine's worker processes are stopping")
            call = next(self._ids)
            self._pending[call] = future
        self._tasks.put((call, method, args, kwargs))
        return future.result()

    def _receive(self) -> None:
        while True:
            try:
                call, ok, value = self._answers.get(timeout=_POLL)
            except queue.Empty:
                if self._closing:
                    return
                self._fail_if_a_worker_died()
                continue
            with self._lock:
                future = self._pending.pop(call)
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def _fail_if_a_worker_died(self) -> None:
        dead = [w for w in self._workers if w.exitcode is not None]
        if not dead:
            return
        with self._lock:
            self._closing = self._broken = True
            pending, self._pending = self._pending, {}
        reason = ", ".join(f"{w.name} exited with {w.exitcode}" for w in dead)
        for future in pending.values():
            future.set_exception(ApplyError(f"an engine worker process died ({reason}); "
                                            "run again"))

    def close(self) -> None:
        with self._lock:
            self._closing = True
        for _ in range(self._threads):
            self._tasks.put(None)  # a stop sign for each thread
        for worker in self._workers:
            stopped = self._stop is not None and self._stop.is_set()
            worker.join(timeout=0 if self._broken or stopped else 10)
            if worker.exitcode is None:
                worker.kill()
                worker.join()
        self._receiver.join()
        self._tasks.close()
        self._answers.close()


def _serve(engine: ClusterEngine, tasks: Any, answers: Any, threads: int, parent: int) -> None:
    """A worker: `threads` threads take calls until a stop sign; the worker exits at once when
    its parent is gone."""
    die_with_parent(parent)
    # Ctrl-C reaches the whole process group: the parent alone decides, and stops the work
    # through the run's shared stop event (SIGINT here would kill the worker mid-call).
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    workers = [threading.Thread(target=_work, args=(engine, tasks, answers), daemon=True)
               for _ in range(threads)]
    for thread in workers:
        thread.start()
    while alive := [t for t in workers if t.is_alive()]:
        if os.getppid() != parent:
            os._exit(1)  # orphaned: the run was killed; stop before doing anything more
        alive[0].join(timeout=_POLL)


def _work(engine: ClusterEngine, tasks: Any, answers: Any) -> None:
    while (task := tasks.get()) is not None:
        call, method, args, kwargs = task
        try:
            answers.put((call, True, getattr(engine, method)(*args, **kwargs)))
        except Exception as e:  # noqa: BLE001 - every error goes back to the caller
            answers.put((call, False, _portable(e)))


def _portable(error: Exception) -> Exception:
    """`error` if it survives pickling (the parent re-raises it as it was), else a ClmgitError
    or ApplyError with its text."""
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001 - any error's text is enough to report it
        kind = ClmgitError if isinstance(error, ClmgitError) else ApplyError
        return kind(f"{type(error).__name__}: {error}")


@contextmanager
def forwarded_events(
    on_event: Callable[[str, str], None],
) -> Iterator[Callable[[str, str], None]]:
    """A sink for the engine's (cluster id, text) events that works in forked workers too: what
    it hears reaches `on_event` in this process, on a thread of its own, until the block ends."""
    events: Any = multiprocessing.get_context("fork").SimpleQueue()

    def forward() -> None:
        while (event := events.get()) is not None:
            if isinstance(event, clmgit.events.Event):  # emitted in a worker (clmgit.events)
                clmgit.events.deliver(event)
            else:
                on_event(*event)

    thread = threading.Thread(target=forward, name="engine-events", daemon=True)
    thread.start()
    try:
        with clmgit.events.forward_from_children(events.put):
            yield lambda cluster_id, text: events.put((cluster_id, text))
    finally:
        events.put(None)
        thread.join()
