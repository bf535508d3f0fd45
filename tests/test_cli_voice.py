"""One voice per failure (issue 15, case 10): usage errors exit 2 wherever they are found,
`--version` answers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

import pytest
import typer
import yaml

from clmgit.cli.main import app
from tests.helpers.cli import run_cli
from tests.helpers.fleet import Fleet


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


#: clmgit run as its console script runs it, in a process of its own (the logging it sets up is
#: the process's), with urllib3's backoff waits written to the file named first instead of slept:
#: every retry happens, and the test does not wait seconds for them.
_WAITS_RECORDED = """
import json, sys
from urllib3.util.retry import Retry
waits = []
Retry._sleep_backoff = lambda self: waits.append(self.get_backoff_time())
from clmgit.cli import main
record = sys.argv.pop(1)
try:
    main()
finally:
    open(record, "w").write(json.dumps(waits))
"""


def test_an_unreachable_registry_is_one_line_after_the_retries(fleet: Fleet, tmp_path) -> None:
    waits = tmp_path / "waits.json"
    proc = subprocess.run([sys.executable, "-c", _WAITS_RECORDED, str(waits),
                           "--repo", str(fleet.path), "--registry", "http://127.0.0.1:9/",
                           "status"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    backoff = json.loads(waits.read_text())
    assert len(backoff) >= 4 and backoff == sorted(backoff) and backoff[-1] > 0, backoff
    assert proc.stderr.count("\n") == 1, proc.stderr  # no urllib3 retry warnings before it
    assert proc.stderr.startswith("error: cannot reach the cluster registry at http://127.0.0.1:9")


@pytest.mark.parametrize("path", [p for p, _ in _commands()], ids=lambda p: " ".join(p) or "clmgit")
def test_h_is_help_and_metavars_are_upper_case(path: list[str]) -> None:
    r = run_cli(*path, "-h")
    assert r.code == 0 and r.out == run_cli(*path, "--help").out, (r.out, r.err)
    usage = [li for li in r.out.splitlines() if li.startswith("Usage:")]
    names = [li.strip().split("  ")[0] for li in r.out.splitlines() if li.lstrip().startswith("-")]
    for text in usage + names:  # metavars only: help text may say `<ref>-jinja`
        assert not re.search(r"\{[a-z]|<[^>]*>", text), text


def test_usage_names_the_arguments_in_upper_case() -> None:
    r = run_cli("promote", "-h")
    assert "Usage: clmgit promote [OPTIONS] SOURCE TARGET\n" in r.out
    assert "-g, --group NAME " in r.out and "-o, --output [table|wide|json|yaml]\n" in r.out


@pytest.mark.parametrize("args", [
    ("status",),
    ("history",),
    ("promote", "dev", "alpha", "--dry-run", "--force"),
    ("diff", "dev", "alpha"),
])
def test_yaml_is_the_json_data_in_block_style(fleet: Fleet, args: tuple[str, ...]) -> None:
    as_json, as_yaml = fleet.cli(*args, "-o", "json"), fleet.cli(*args, "-o", "yaml")
    assert as_yaml.code == as_json.code == 0, (as_yaml.err, as_json.err)
    assert yaml.safe_load(as_yaml.out) == json.loads(as_json.out)
    assert not as_yaml.out.lstrip().startswith(("{", "[")), as_yaml.out  # block, not flow


@pytest.mark.parametrize("args", [("freeze", "stable", "--reason", "Black Friday"),
                                  ("unfreeze", "beta")])
def test_freeze_dry_run_says_what_it_would_write_and_writes_nothing(
        fleet: Fleet, args: tuple[str, ...]) -> None:
    if args[0] == "unfreeze":
        assert fleet.cli("freeze", "beta", "--reason", "x").code == 0
    before = (fleet.branch("main"), fleet.file("channels/stable.yaml"), fleet.file(
        "channels/beta.yaml"))
    r = fleet.cli(*args, "--dry-run")
    assert r.code == 0, r.err
    channel = args[1]
    assert r.out.startswith(f"would {args[0]} {channel}: commit channels/{channel}.yaml ("), r.out
    assert r.out.endswith("dry run: nothing written\n"), r.out
    assert (fleet.branch("main"), fleet.file("channels/stable.yaml"),
            fleet.file("channels/beta.yaml")) == before


@pytest.mark.parametrize("fmt", [json.loads, yaml.safe_load], ids=["json", "yaml"])
def test_freeze_output_is_data(fleet: Fleet, fmt: Any) -> None:
    name = "json" if fmt is json.loads else "yaml"
    r = fleet.cli("freeze", "stable", "--reason", "Black Friday", "-o", name)
    assert r.code == 0, r.err
    data = fmt(r.out)["result"]
    assert (data["outcome"], data["action"], data["channel"], data["reason"]) == (
        "landed", "freeze", "stable", "Black Friday")
    assert data["commit"] == fleet.branch("main") and data["file"] == "channels/stable.yaml"
    again = fmt(fleet.cli("unfreeze", "beta", "-o", name).out)["result"]
    assert again["outcome"] == "nothing-to-do" and again["commit"] is None


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_a_script_for_the_shell(shell: str) -> None:
    r = run_cli("completion", shell)
    assert r.code == 0 and r.err == "", r.err
    assert "clmgit" in r.out and "_CLMGIT_COMPLETE=complete_" + shell in r.out, r.out


def test_completion_of_an_unknown_shell_is_a_usage_error() -> None:
    r = run_cli("completion", "tcsh")
    assert r.code == 2 and r.out == "", r.out
    error = [li for li in r.err.splitlines() if li.startswith("Error:")]
    assert len(error) == 1 and "'tcsh' is not one of 'bash', 'zsh', 'fish'" in error[0], r.err


def test_the_script_s_requests_are_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_CLMGIT_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "clmgit prom")
    monkeypatch.setenv("COMP_CWORD", "1")
    r = run_cli()
    assert (r.code, r.out) == (0, "promote\n"), r.err
