"""A process that reads the file registry again and again (the controller, every round) frees
what each read leaves behind: the objects of a finished command are not frozen away with the
records (`collection_paused(keep=True)`), and so neither are their git processes' pipes."""

from __future__ import annotations

import os

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
