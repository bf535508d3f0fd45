"""One voice per failure (issue 15, case 10): usage errors exit 2 wherever they are found,
`--version` answers."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer

from clmgit.cli.main import app
from tests.conftest import Fleet, run_cli


def _commands() -> list[tuple[list[str], Any]]:
    """Every command and group of the app (Typer's own click types, hence duck-typed)."""
    found: list[tuple[list[str], Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        found.append((path, command))
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


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


@pytest.mark.parametrize("path", [p for p, _ in _commands()], ids=lambda p: " ".join(p) or "clmgit")
def test_every_option_has_help_and_flags_show_no_value(path: list[str]) -> None:
    command = dict((tuple(p), c) for p, c in _commands())[tuple(path)]
    options = [p for p in command.params if p.param_type_name == "option"]
    undocumented = [p.opts for p in options if not p.help]
    assert not undocumented, f"clmgit {' '.join(path)}: options without help: {undocumented}"
    r = run_cli(*path, "--help")
    assert r.code == 0 and "Usage: clmgit" in r.out, (r.out, r.err)
    assert "<bool>" not in r.out and "BOOLEAN" not in r.out, r.out
    for flag in (p for p in options if p.is_flag):
        # the flag's own line reads "  -v, --verbose   Debug logs…": its help right after its names
        line = next(li for li in r.out.splitlines() if li.lstrip().startswith(tuple(flag.opts)))
        names, _, text = line.strip().partition("  ")
        assert set(flag.opts) == {n.strip() for n in names.split(",")}, line
        assert text.lstrip().startswith(flag.help.split()[0]), line


def test_an_unreachable_registry_is_one_line_after_the_retries(fleet: Fleet) -> None:
    proc = subprocess.run([sys.executable, "-m", "clmgit", "--repo", str(fleet.path),
                           "--registry", "http://127.0.0.1:9/", "status"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1, proc.stderr  # no urllib3 retry warnings before it
    assert proc.stderr.startswith("error: cannot reach the cluster registry at http://127.0.0.1:9")
