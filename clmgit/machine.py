"""What the machine offers this process."""

from __future__ import annotations

import gc
import os
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
