"""`make demo` prints what it runs: the environment first, then each command exactly as run, so
that the printed lines, pasted into a shell, do the same."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from clmgit_sandbox.demo import Demo

from tests.helpers.fleet import Fleet

# End to end: each test runs `make demo`'s code in processes of its own (bash, clmgit, a fresh
# Python importing the demo), seconds each; `make test-fast` leaves them out.
pytestmark = pytest.mark.slow


def test_the_printed_lines_run_the_same_command(fleet: Fleet, tmp_path,
                                                capfd: pytest.CaptureFixture[str]) -> None:
    demo = Demo({"CLMGIT_REPO": str(fleet.path), "CLMGIT_KUBECONFIG": str(tmp_path / "kc"),
                 "CLMGIT_CACHE_DIR": str(tmp_path / "cache")})
    demo.clmgit("status", "--output", "json")
    printed, _ = capfd.readouterr()
    exports = re.findall(r"^export .+$", printed, re.M)
    commands = re.findall(r"^\$ (clmgit .+)$", printed, re.M)
    assert len(exports) == 4 and commands == ["clmgit status --output json"]
    demo_output = printed.split(f"$ {commands[0]}\n", 1)[1]

    script = "\n".join([*exports, commands[0]])
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLMGIT_")}
    pasted = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert pasted.returncode == 0, pasted.stderr
    assert pasted.stdout == demo_output and '"dev-1"' in pasted.stdout


def test_the_printed_duration_counts_from_the_process_start() -> None:
    """`Done in N s` includes Python starting and importing, not only the story."""
    script = ("import time; time.sleep(1.5); from clmgit_sandbox.demo import started_at; "
              "print(time.monotonic() - started_at())")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert 1.4 <= float(done.stdout) < 60


def test_the_demo_ends_with_the_report_and_its_path(fleet: Fleet, tmp_path, monkeypatch,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    from clmgit_sandbox import demo as demo_module

    monkeypatch.setattr(demo_module, "REPORT", tmp_path / "out" / "demo-report.html")
    demo = Demo({"CLMGIT_REPO": str(fleet.path), "CLMGIT_CACHE_DIR": str(tmp_path / "cache")})
    path = demo_module.write_report(demo)
    printed, _ = capfd.readouterr()
    assert path == tmp_path / "out" / "demo-report.html"
    assert f"$ clmgit report --html {path}\n" in printed
    assert path.read_text().startswith("<!DOCTYPE html>")


def test_the_whole_demo_runs_and_shows_a_window_refusal(tmp_path) -> None:
    """`make demo` end to end: every step's exit code as the demo expects it (a command whose
    code changed stops it), and the promotion window's refusal names its next opening."""
    env = {**os.environ, "CLMGIT_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "clmgit_sandbox.demo"], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"the next opens at \d{4}-\d\d-\d\dT\d\d:\d\d[+-]\d\d:\d\d", done.stdout
                     + done.stderr)
