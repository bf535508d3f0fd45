"""A second writer forced into the middle of a first one, and a run killed at a git call,
without sleeps or luck.

The writer is `clmgit` in a subprocess whose `git` is a wrapper: the first `git <command>` it
runs (e.g. `commit-tree`, after the plan is made and before any ref moves) waits there until the
test releases it — the test does what the second writer does, then releases the first — or, for
a kill, kills clmgit with SIGKILL there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.cli import Result

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # a wait for the other side of the barrier, not a guess at timing

KILLER = """#!/bin/sh
case "$* " in "{command} "*) kill -9 $PPID; exit 137;; esac
exec "{git}" "$@"
"""

#: Kills clmgit at its Nth git call, whatever the command; counts in a file.
KILLER_AT_CALL = """#!/bin/sh
n=$(( $(cat "{counter}" 2>/dev/null || echo 0) + 1 ))
echo $n > "{counter}"
[ $n -eq {n} ] && kill -9 $PPID && exit 137
exec "{git}" "$@"
"""

WRAPPER = """#!/bin/sh
if [ "$1" = "{command}" ] && mkdir "{barrier}/arrived" 2>/dev/null; then
  n=0
  while [ ! -e "{barrier}/release" ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done
fi
exec "{git}" "$@"
"""


@dataclass
class Blocked:
    proc: subprocess.Popen[str]
    barrier: Path

    def release(self) -> Result:
        (self.barrier / "release").touch()
        out, err = self.proc.communicate(timeout=WAIT)
        return Result(self.proc.returncode, out, err)


def _spawn(repo: Path, args: tuple[str, ...], script: str, tmp: Path) -> subprocess.Popen[str]:
    bindir = tmp / "bin"
    bindir.mkdir()
    wrapper = bindir / "git"
    wrapper.write_text(script)
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "clmgit", "--repo", str(repo), *args],
                            env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _real_git() -> str:
    real_git = shutil.which("git")
    assert real_git is not None
    return real_git


def run_killed(repo: Path, args: tuple[str, ...], *, at: str, tmp: Path) -> Result:
    """`clmgit --repo REPO ARGS`, killed (SIGKILL) at its first `git AT` (a command, or a
    command and its first arguments: `read-tree -m`)."""
    proc = _spawn(repo, args, KILLER.format(command=at, git=_real_git()), tmp)
    out, err = proc.communicate(timeout=WAIT)
    return Result(proc.returncode, out, err)


def run_killed_at_call(repo: Path, args: tuple[str, ...], *, n: int, tmp: Path) -> Result:
    """`clmgit --repo REPO ARGS`, killed (SIGKILL) at its `n`th git call of any kind; a run
    with fewer calls ends by itself (its code is then not -9)."""
    script = KILLER_AT_CALL.format(counter=tmp / "git-calls", n=n, git=_real_git())
    proc = _spawn(repo, args, script, tmp)
    out, err = proc.communicate(timeout=WAIT)
    return Result(proc.returncode, out, err)


def start_blocked(repo: Path, args: tuple[str, ...], *, at: str, tmp: Path) -> Blocked:
    """`clmgit --repo REPO ARGS`, stopped at its first `git AT`; returns once it is there."""
    barrier = tmp / "barrier"
    barrier.mkdir()
    script = WRAPPER.format(command=at, barrier=barrier, git=_real_git())
    proc = _spawn(repo, args, script, tmp)
    deadline = time.monotonic() + WAIT
    while not (barrier / "arrived").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            out, err = proc.communicate()
            raise AssertionError(f"the writer never reached `git {at}`: {out}{err}")
        time.sleep(0.02)
    return Blocked(proc, barrier)
