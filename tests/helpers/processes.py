"""Helpers for tests that run the sandbox's programs as real processes."""

from __future__ import annotations

import os
import select
import subprocess
import time
from pathlib import Path


def read_until(process: subprocess.Popen[bytes], marker: str, timeout: float) -> str:
    """The process's output up to and including `marker`, failing after `timeout` seconds or
    when the output ends first. Raw reads from the pipe: a buffered reader would hide data
    from `select`."""
    assert process.stdout is not None
    fd, seen, deadline = process.stdout.fileno(), b"", time.monotonic() + timeout
    poller = select.poll()  # not select(): a long test session's descriptors may pass 1024
    poller.register(fd, select.POLLIN)
    while marker.encode() not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no {marker!r} within {timeout} s; output so far:\n{seen!r}"
        if poller.poll(remaining * 1000):
            chunk = os.read(fd, 65536)
            assert chunk, f"the process ended early:\n{seen.decode()}"
            seen += chunk
    return seen.decode()


def stop(process: subprocess.Popen[bytes], signum: int, timeout: float = 60) -> str:
    """Send `signum`, wait for the process to end; the rest of its output."""
    process.send_signal(signum)
    return process.communicate(timeout=timeout)[0].decode()


def gone(pid: int) -> bool:
    """Whether process `pid` is no longer running (ended, or a zombie waiting to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"
