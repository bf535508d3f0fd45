"""A second writer forced into the middle of a first one, and a run killed at a git call,
without sleeps or luck.

The writer is `clmgit` in a subprocess whose `git` is a wrapper: the first `git <command>` it
runs (e.g. `commit-tree`, after the plan is made and before any ref moves) waits there until the
test releases it — the test does what the second writer does, then releases the first — or, for
a kill, kills clmgit with SIGKILL there. A recording wrapper logs every git call of a run with a
digest of the repositories' files as the call starts, from which `kill_points` derives the calls
a kill before which can leave a state of its own.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.cli import Result
from tests.helpers.processes import read_until

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # a wait for the other side of the barrier, not a guess at timing

KILLER = """#!/bin/sh
case "$* " in "{command} "*) kill -9 $PPID; exit 137;; esac
exec "{git}" "$@"
"""

#: Kills clmgit at its Nth git call, whatever the command; logs each call's arguments, one
#: line each (fields split by \037), and counts them by that log.
KILLER_AT_CALL = """#!/bin/sh
{{ for a in "$@"; do printf '%s\\037' "$a"; done; echo; }} >> "{log}"
[ $(wc -l < "{log}") -eq {n} ] && kill -9 $PPID && exit 137
exec "{git}" "$@"
"""

#: Logs each git call as a line: a digest of every file under the watched folders (content,
#: name, size; `.git` included) as the call starts, then the arguments (fields split by \037).
RECORDER = """#!/bin/sh
{{ find {watched} -type f -print0 | LC_ALL=C sort -z | xargs -0 cksum | cksum | tr -d '\\n'
  for a in "$@"; do printf '\\037%s' "$a"; done; echo; }} >> "{log}"
exec "{git}" "$@"
"""

WRAPPER = """#!/bin/sh
if [ "$1" = "{command}" ] && mkdir "{barrier}/arrived" 2>/dev/null; then
  n=0
  while [ ! -e "{barrier}/release" ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done
fi
exec "{git}" "$@"
"""


#: A Python that has imported clmgit (the modules named in its argv) and, for each JSON line on
#: its stdin, forks a process that is `python -m clmgit ARGS` with that environment and those
#: output files, waits for it and prints its exit code (-9: killed). The fork skips the start
#: and the imports, two thirds of a short command's CPU; the killed process is as real.
ZYGOTE = """
import atexit, importlib, json, os, sys, traceback
for name in sys.argv[1:]:
    importlib.import_module(name)
for line in sys.stdin:
    run = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.environ.clear()
        os.environ.update(run["env"])
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        sys.stdin = open(os.devnull)
        for fd, path in ((1, run["out"]), (2, run["err"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
        sys.argv = ["clmgit", *run["args"]]
        code = 0
        try:
            from clmgit.cli import main
            main()
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
            if not isinstance(e.code, (int, type(None))):
                print(e.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""

#: What a promotion command imports: the zygote's preload.
PROMOTION = ("clmgit.cli.main", "clmgit.promotion.promote", "clmgit.promotion.write")


class Zygote:
    """`clmgit` runs forked from one process that imported it already (`ZYGOTE`)."""

    def __init__(self, preload: tuple[str, ...] = PROMOTION) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", ZYGOTE, *preload],
                                     env={**os.environ, "PYTHONPATH": str(ROOT)},
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def run(self, repo: Path, args: tuple[str, ...], script: str, tmp: Path) -> Result:
        """`clmgit --repo REPO ARGS` with `git` the shell `script`, to its end or its kill."""
        assert self.proc.stdin is not None
        out, err = tmp / "stdout", tmp / "stderr"
        request = {"env": _environment(script, tmp), "out": str(out), "err": str(err),
                   "args": ["--repo", str(repo), *args]}
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()
        code = int(read_until(self.proc, "\n", timeout=WAIT))
        return Result(code, out.read_text(), err.read_text())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=WAIT)


@dataclass
class Blocked:
    proc: subprocess.Popen[str]
    barrier: Path

    def release(self) -> Result:
        (self.barrier / "release").touch()
        out, err = self.proc.communicate(timeout=WAIT)
        return Result(self.proc.returncode, out, err)


def _environment(script: str, tmp: Path) -> dict[str, str]:
    """This process's environment with `git` on PATH the shell `script` (written in `tmp`)."""
    bindir = tmp / "bin"
    bindir.mkdir()
    wrapper = bindir / "git"
    wrapper.write_text(script)
    wrapper.chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(ROOT)}


def _spawn(repo: Path, args: tuple[str, ...], script: str, tmp: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "clmgit", "--repo", str(repo), *args],
                            env=_environment(script, tmp), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


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


def run_killed_at_call(repo: Path, args: tuple[str, ...], *, n: int, tmp: Path,
                       zygote: Zygote) -> tuple[Result, list[tuple[str, ...]]]:
    """`clmgit --repo REPO ARGS`, killed (SIGKILL) at its `n`th git call of any kind (before
    that call runs), and the arguments of the calls it made, the `n`th included; a run with
    fewer calls ends by itself (its code is then not -9)."""
    log = tmp / "git-calls"
    result = zygote.run(repo, args, KILLER_AT_CALL.format(log=log, n=n, git=_real_git()), tmp)
    calls = [tuple(line.split("\037")[:-1]) for line in log.read_text().splitlines()]
    return result, calls


@dataclass(frozen=True)
class GitCall:
    """One git call of a recorded run: the digest of the watched files as it started, and
    its arguments."""

    state: str
    argv: tuple[str, ...]

    @property
    def command(self) -> str:
        return git_command(self.argv)


def run_recorded(repo: Path, args: tuple[str, ...], *, watched: tuple[Path, ...], tmp: Path,
                 zygote: Zygote) -> tuple[Result, list[GitCall]]:
    """`clmgit --repo REPO ARGS` to its end, with every git call it made (`RECORDER`)."""
    log = tmp / "git-calls"
    script = RECORDER.format(watched=" ".join(shlex.quote(str(p)) for p in watched), log=log,
                             git=_real_git())
    result = zygote.run(repo, args, script, tmp)
    calls = [GitCall(state, tuple(argv)) for state, *argv in
             (line.split("\037") for line in log.read_text().splitlines())]
    return result, calls


#: git's own options that take a value as the next argument.
_GIT_OPTIONS_WITH_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace"}

#: Commands that never write (no ref, index, object, file, remote or lock): the short list; a
#: command not on it counts as one that writes.
_READS = {"version", "rev-parse", "cat-file", "ls-tree", "ls-files", "merge-base", "rev-list",
          "log", "show", "show-ref", "for-each-ref"}


def _command_and_args(argv: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in _GIT_OPTIONS_WITH_VALUE else 1
    return (argv[i], argv[i + 1:]) if i < len(argv) else ("", ())


def git_command(argv: tuple[str, ...]) -> str:
    """The git command of `argv`, past git's own options (`--git-dir X cat-file` is
    `cat-file`)."""
    return _command_and_args(argv)[0]


def reads_only(argv: tuple[str, ...]) -> bool:
    """Whether the git call `argv` surely writes nothing; when in doubt, it writes."""
    command, rest = _command_and_args(argv)
    positional = [a for a in rest if not a.startswith("-")]
    if command in _READS:
        return True
    if command == "symbolic-ref":  # `symbolic-ref NAME` reads, `symbolic-ref NAME REF` writes
        return len(positional) == 1
    if command == "config":
        return bool({"--get", "--get-all", "--get-regexp", "--list", "-l"} & set(rest))
    if command == "remote":
        return rest in ((), ("-v",)) or rest[:1] == ("get-url",)
    if command == "worktree":
        return rest[:1] == ("list",)
    if command == "hash-object":
        return "-w" not in rest
    return False


def kill_points(calls: list[GitCall]) -> list[int]:
    """The git calls (counted from 1) a kill before which can leave a state no earlier kill
    point leaves: the first, and each one after a call that may write or after which the
    watched files differ (clmgit's own writes: its lock, its intent). A kill before a reading
    call with nothing written since the call before it leaves what a kill there leaves."""
    return [n for n in range(1, len(calls) + 1)
            if n == 1 or not reads_only(calls[n - 2].argv)
            or calls[n - 1].state != calls[n - 2].state]


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
