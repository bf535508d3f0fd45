"""A process that runs command after command (a test session, a program embedding clmgit) keeps
nothing of a finished one: its git processes' pipes are closed when its repositories are dropped,
without a collection. A registry read outside a command (a library call) freezes nothing
(`collection_paused(keep=True)`)."""

from __future__ import annotations

import gc
import os

from clmgit.registry.file import FileRegistry
from tests.helpers.cli import run_cli
from tests.helpers.fleet import Fleet


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_repeated_commands_in_one_process_leave_no_descriptors(fleet: Fleet) -> None:
    for _ in range(2):  # warm: caches and lazily opened files
        assert run_cli("--repo", str(fleet.path), "status").code == 0
    before = _open_descriptors()
    for _ in range(6):
        assert run_cli("--repo", str(fleet.path), "status").code == 0
    # Before the fix: 6 more per command (a repository's git processes, never collected).
    assert _open_descriptors() - before <= 6


def test_a_library_read_leaves_nothing_frozen(fleet: Fleet) -> None:
    assert FileRegistry(fleet.path / "clusters.yaml").clusters()
    assert gc.get_freeze_count() == 0
