"""One voice per failure (issue 15, case 10): usage errors exit 2 wherever they are found,
`--version` answers."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import Fleet, run_cli


def test_version() -> None:
    from importlib.metadata import version

    r = run_cli("--version")
    assert (r.code, r.out) == (0, f"clmgit {version('clmgit')}\n")


@pytest.mark.parametrize("args", [
    ("reconcile", "--concurrency", "0"),
    ("reconcile", "--shard", "5/4"),
    ("reconcile", "--shard", "x"),
    ("reconcile", "--processes", "0"),
])
def test_usage_errors_exit_2(fleet: Fleet, args: tuple[str, ...]) -> None:
    r = fleet.cli(*args)
    assert r.code == 2, (r.out, r.err)
    assert "Traceback" not in r.err and "Usage:" in r.err


def test_an_unreachable_registry_is_one_line_after_the_retries(fleet: Fleet) -> None:
    proc = subprocess.run([sys.executable, "-m", "clmgit", "--repo", str(fleet.path),
                           "--registry", "http://127.0.0.1:9/", "status"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1, proc.stderr  # no urllib3 retry warnings before it
    assert proc.stderr.startswith("error: cannot reach the cluster registry at http://127.0.0.1:9")
