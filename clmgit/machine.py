"""What the machine offers this process."""

from __future__ import annotations

import ctypes
import gc
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: Net new objects between two collections of the youngest generation while clusters render
#: (Python's default is 700).
RENDER_COLLECTION_THRESHOLD = 50_000


def usable_cores() -> int:
    """The cores this process may run on (a CI container's share, not the host's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def process_namespace() -> str:
    """`<boot id>:<PID namespace inode>` of this process, or "" where /proc does not tell. Two
    processes with the same value see the same process ids: one can ask whether the other's
    pid is alive. The host name alone does not say so (containers with host networking)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        namespace = os.readlink("/proc/self/ns/pid")  # pid:[4026531836]
    except OSError:
        return ""
    inode = namespace.partition("[")[2].rstrip("]")
    if not boot or not inode.isdigit():
        return ""
    return f"{boot}:{inode}"


def process_is_gone(pid: int, namespace: str) -> bool:
    """Whether process `pid`, started where `process_namespace()` said `namespace`, is known to
    have ended: only a process of this boot and PID namespace can be judged, never one of
    another (or one that did not say)."""
    here = process_namespace()
    if not here or namespace != here:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


#: prctl(2)'s option that asks for a signal when the parent dies.
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """In a process just forked from `parent`: be killed (SIGKILL) the moment `parent` dies, on
    Linux through prctl's PR_SET_PDEATHSIG; exit now if it is gone already. A killed run's
    workers and compile helpers would otherwise go on rendering and writing to the cache — into
    a directory its caller may be removing (the demo's, on Ctrl-C, came back). Elsewhere only
    the check now; the callers keep their own checks of the parent. Linux sends the signal when
    the *thread* that forked ends, so fork from one that outlives the child's work (the engine's
    workers are started by the run's thread; a compile helper, whose work is optional, by the
    rendering one)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no libc to ask: the check below still holds
            pass
    if os.getppid() != parent:
        os._exit(1)


@contextmanager
def spaced_collections(threshold: int = RENDER_COLLECTION_THRESHOLD) -> Iterator[None]:
    """The cyclic garbage collector run less often while the block runs (in forked workers too).

    Rendering a cluster parses hundreds of YAML documents into short-lived trees (nodes,
    marks, mappings) that reference counting frees; at Python's default threshold their
    allocation sets off a collection every 700 objects, each walking the tree being built, and
    those collections were a fifth of a dry run's CPU time. Cyclic garbage still gets
    collected, after `threshold` net new objects (a few MB) instead of 700."""
    before = gc.get_threshold()
    if before[0] >= threshold:
        yield
        return
    gc.set_threshold(threshold, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextmanager
def collection_paused(*, keep: bool = False) -> Iterator[None]:
    """No cyclic garbage collection while a whole registry is decoded and parsed. Those are
    hundreds of thousands of new objects that all stay alive, and each full collection the
    allocations trigger walks every object so far: with it, listing 5,000 records took twice as
    long. What little cyclic garbage is made meanwhile is collected once the collector resumes.

    With `keep` (a registry the process holds on to: the file registry's records), inside
    `owned_heap`, what is alive at the end is moved out of the collector's sight
    (`gc.freeze`): otherwise the collections that the next allocations trigger walk the records
    again and again — a third of `reconcile`'s time with 10,000 clusters in sync. Records carry
    no cycles, so reference counting still frees them. A later read in the same block (a
    controller's next round) first hands what the last one froze back to the collector and
    collects it once, so no cyclic garbage frozen with the records outlives the next read."""
    global _frozen
    freeze = keep and _owned
    if freeze and _frozen:
        # Cyclic garbage alive at the last freeze was frozen with the records: collect it now,
        # or a process that reads the registry every round would never free it.
        release_frozen()
        gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
            _frozen = True
        if was_enabled:
            gc.enable()


#: Inside `owned_heap`; and whether a registry read froze the heap and nothing handed it back
#: since (a flag of our own: `gc.get_freeze_count` walks every frozen object to count them).
_owned = False
_frozen = False


@contextmanager
def owned_heap() -> Iterator[None]:
    """The block is all this process is there for (a command the entry point runs, the process
    exiting after it), so a registry read in it may freeze the heap
    (`collection_paused(keep=True)`). What was frozen stays so when the block ends: the
    collection at interpreter exit then skips the records (handing them back first cost a
    10,000-cluster `status` 0.1 s). A caller that goes on after a command (the tests run
    commands in their own process) hands them back with `release_frozen`. A library call
    outside such a block never freezes its caller's heap."""
    global _owned
    _owned = True
    try:
        yield
    finally:
        _owned = False


def release_frozen() -> None:
    """Hand what a registry read froze back to the collector (`gc.unfreeze`, which costs
    nothing), as the end of a process would."""
    global _frozen
    if _frozen:
        gc.unfreeze()
        _frozen = False
