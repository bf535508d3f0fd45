"""SIGTERM and SIGHUP end `make demo` and `make sandbox` as Ctrl-C does, even while a `clmgit`
child runs: the temporary directory, the children and the servers are gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.processes import gone, read_until, stop

pytestmark = pytest.mark.slow


def _children(pid: int) -> set[int]:
    """Processes whose parent is `pid`."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _temporary_directory(child: int) -> Path:
    """The throw-away directory: the child runs with CLMGIT_CACHE_DIR=<it>/cache."""
    environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
    [cache] = [v.split(b"=", 1)[1] for v in environ if v.startswith(b"CLMGIT_CACHE_DIR=")]
    return Path(cache.decode()).parent


@pytest.mark.parametrize(("module", "marker", "signum"), [
    ("clmgit_sandbox.demo", "$ clmgit reconcile\n", signal.SIGTERM),
    ("clmgit_sandbox.explore", "clusters (clmgit reconcile)...", signal.SIGHUP),
])
def test_a_signal_cleans_up_like_ctrl_c(module: str, marker: str, signum: int) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "CLMGIT_CACHE_DIR")}
    process = subprocess.Popen([sys.executable, "-m", module], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, env=env)
    try:
        read_until(process, marker, timeout=300)
        deadline = time.monotonic() + 60
        while not (children := _children(process.pid)):  # the reconcile child has started
            assert time.monotonic() < deadline, "no child process"
            time.sleep(0.05)
        temporary = _temporary_directory(min(children))
        assert temporary.is_dir()
    finally:
        rest = stop(process, signum)
    assert process.returncode in (0, 130), rest
    assert all(gone(pid) for pid in children)
    assert not temporary.exists()
