"""What the machine offers a process: the collector run less often while clusters render, and
registries frozen out of its sight while a command runs."""

from __future__ import annotations

import gc
import subprocess
import sys
import time

from clmgit_sandbox.doubles import FakeKube, FakeNodePools, FakeStacks

from clmgit.config.values import placeholder_values
from clmgit.engine.cluster import Backends
from clmgit.machine import (
    RENDER_COLLECTION_THRESHOLD,
    collection_paused,
    owned_heap,
    release_frozen,
    spaced_collections,
)
from clmgit.model import Cluster
from clmgit.reconcile.session import Options, reconcile
from clmgit.workspace import open_workspace
from tests.helpers.fleet import Fleet
from tests.helpers.processes import gone


def test_collections_are_spaced_inside_the_block_and_as_before_after_it() -> None:
    before = gc.get_threshold()
    with spaced_collections(threshold=before[0] + 1000):
        assert gc.get_threshold() == (before[0] + 1000, *before[1:])
    assert gc.get_threshold() == before
    with spaced_collections(threshold=1):  # never more often than the process had them
        assert gc.get_threshold() == before
    assert gc.get_threshold() == before


def test_a_reconcile_renders_with_spaced_collections(fleet: Fleet) -> None:
    before = gc.get_threshold()
    seen: list[int] = []

    def backends(cluster: Cluster) -> Backends:
        seen.append(gc.get_threshold()[0])
        return Backends(stacks=FakeStacks(), pools=FakeNodePools(), kube=FakeKube(),
                        values=placeholder_values(cluster))

    reconcile(open_workspace(str(fleet.path)), Options(dry_run=True, backends=backends))

    assert seen and set(seen) == {max(before[0], RENDER_COLLECTION_THRESHOLD)}
    assert gc.get_threshold() == before


def test_a_kept_read_is_frozen_only_inside_an_owned_heap_until_released() -> None:
    with collection_paused(keep=True):
        outside = [{"record": i} for i in range(100)]
    assert gc.get_freeze_count() == 0  # a library call: the caller's heap is not ours
    with owned_heap():
        with collection_paused(keep=True):
            inside = [{"record": i} for i in range(100)]
        assert gc.get_freeze_count() > 0
        with collection_paused(keep=True):  # the next round's read: the last freeze handed back
            again = [{"record": i} for i in range(100)]
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() > 0  # the process exits next: its last collection skips them
    release_frozen()
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()
    assert len(outside) == len(inside) == len(again) == 100


def test_a_forked_child_dies_with_its_parent() -> None:
    script = (
        "import os, time\n"
        "from clmgit.machine import die_with_parent\n"
        "parent = os.getpid()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    die_with_parent(parent)\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "print(pid, flush=True)\n"
        "time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.kill()  # SIGKILL: nothing in the parent runs, its children are not told
    parent.wait()
    deadline = time.monotonic() + 10  # without the parent-death signal: 60 s
    while not gone(child):
        assert time.monotonic() < deadline, "the child outlived its parent"
        time.sleep(0.01)

