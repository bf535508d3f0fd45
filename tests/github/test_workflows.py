"""The ready-to-copy GitHub Actions workflows of examples/github-workflows/.

Each must be valid YAML with the intended triggers and well-formed jobs, and every `clmgit`
command in it must parse with the real CLI. The commands are taken from the steps' scripts as
bash really expands them: `${{ … }}` expressions are replaced by sample values (as the runner
replaces them in the text), the step's environment is set, and `clmgit` is a shell function
that records its arguments.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml

from clmgit.cli import app

WORKFLOWS = Path(__file__).resolve().parents[2] / "examples" / "github-workflows"
NAMES = ("promote.yml", "preview.yml", "reconcile.yml")
SHA = "0123456789abcdef0123456789abcdef01234567"
#: Sample values of the expressions whose value shapes a command line.
SAMPLES = {
    "inputs.source": "alpha",
    "inputs.target": "beta",
    "inputs.groups": "canary, default",
    "steps.find.outputs.previews": f"alpha beta {SHA} canary\ndev alpha {SHA}",
}
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
INVOCATION = re.compile(r"^\s*clmgit\s", re.MULTILINE)


def load(name: str) -> dict[str, Any]:
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def matrix_combos(job: dict[str, Any]) -> list[dict[str, Any]]:
    matrix = (job.get("strategy") or {}).get("matrix") or {}
    keys = list(matrix)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*matrix.values())]


def substitute(text: str, combo: dict[str, Any], total: int) -> str:
    def value(m: re.Match[str]) -> str:
        expr = m.group(1)
        if expr.startswith("matrix."):
            return str(combo[expr.removeprefix("matrix.")])
        if expr == "strategy.job-total":
            return str(total)
        if expr.startswith(("inputs.", "steps.")):
            return SAMPLES[expr]  # a KeyError here: add a sample for the new expression
        return "placeholder"  # github.*, secrets.*, vars.*: shape no command line

    return EXPRESSION.sub(value, text)


def clmgit_calls(
    wf: dict[str, Any], job: dict[str, Any], step: dict[str, Any], combo: dict[str, Any], tmp: Path
) -> list[list[str]]:
    """The argv of every clmgit call the step's bash script makes."""
    total = len(matrix_combos(job)) or 1
    env = {**(wf.get("env") or {}), **(job.get("env") or {}), **(step.get("env") or {})}
    record = tmp / "argv"
    shim = f"clmgit() {{ printf '%s\\0' \"$@\" >> {record}; printf '\\036\\0' >> {record}; }}\n"
    script = shim + substitute(step["run"], combo, total)
    run_env = {k: substitute(str(v), combo, total) for k, v in env.items()}
    run_env.update(PATH=os.environ["PATH"], RUNNER_TEMP=str(tmp), HOME=str(tmp))
    # GitHub runs `bash --noprofile --norc -eo pipefail {0}` for run steps.
    subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        env=run_env,
        cwd=tmp,
        check=True,
    )
    words = record.read_text().split("\0") if record.exists() else []
    record.unlink(missing_ok=True)
    calls, argv = [], []
    for w in words[:-1]:
        if w == "\x1e":
            calls.append(argv)
            argv = []
        else:
            argv.append(w)
    return calls


def parse(argv: list[str]) -> str:
    """Parse argv with the real CLI (no command runs); returns the subcommand's name."""
    group = typer.main.get_command(app)
    ctx = group.make_context("clmgit", list(argv), resilient_parsing=False)
    rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    name, command, args = group.resolve_command(ctx, rest)  # type: ignore[attr-defined]
    assert command is not None and name is not None
    command.make_context(name, args, parent=ctx, resilient_parsing=False)
    return name


def bash_steps() -> list[tuple[str, str, int, dict[str, Any]]]:
    """The bash steps that call clmgit (only those run here: others install or fetch)."""
    cases = []
    for name in NAMES:
        wf = load(name)
        for job_id, job in wf["jobs"].items():
            for i, step in enumerate(job["steps"]):
                script = step.get("run", "")
                if INVOCATION.search(script) and step.get("shell", "bash") == "bash":
                    for combo in matrix_combos(job) or [{}]:
                        cases.append((name, job_id, i, combo))
    return cases


@pytest.mark.parametrize("name", NAMES)
def test_workflow_is_well_formed(name: str) -> None:
    wf = load(name)
    assert wf["name"] and wf["on"] and wf["jobs"]
    for job_id, job in wf["jobs"].items():
        assert job["runs-on"] == "ubuntu-latest", job_id
        needs = job.get("needs", [])
        for need in [needs] if isinstance(needs, str) else needs:
            assert need in wf["jobs"] and need != job_id, f"{job_id} needs {need}"
        assert job["steps"], job_id
        for step in job["steps"]:
            assert ("run" in step) != ("uses" in step), f"{job_id}: {step}"
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@v\d+", step["uses"]), step["uses"]
            if step.get("shell") == "python":
                compile(substitute(step["run"], {}, 1), f"{name}:{job_id}", "exec")
    text = (WORKFLOWS / name).read_text()
    assert text.count("${{") == text.count("}}") and "\t" not in text


def test_promote_is_dispatched_by_hand_and_opens_a_pr() -> None:
    wf = load("promote.yml")
    assert list(wf["on"]) == ["workflow_dispatch"]
    inputs = wf["on"]["workflow_dispatch"]["inputs"]
    assert set(inputs) == {"source", "target", "groups"}
    assert inputs["source"]["required"] and inputs["target"]["required"]
    assert not inputs["groups"]["required"]
    assert wf["permissions"] == {"contents": "write", "pull-requests": "write"}


def test_preview_runs_on_pull_requests_touching_channels_or_cluster() -> None:
    wf = load("preview.yml")
    assert list(wf["on"]) == ["pull_request"]
    assert sorted(wf["on"]["pull_request"]["paths"]) == ["channels/**", "cluster/**"]
    assert wf["permissions"]["pull-requests"] == "write"
    uses = [s.get("uses", "") for s in wf["jobs"]["preview"]["steps"]]
    assert any(u.startswith("actions/github-script@") for u in uses)


def test_reconcile_shards_then_syncs_branches_and_never_overlaps(tmp_path: Path) -> None:
    from clmgit.reconcile.plan import parse_shard

    wf = load("reconcile.yml")
    assert wf["on"]["push"]["branches"] == ["main"]
    assert wf["concurrency"]["group"] and wf["concurrency"]["cancel-in-progress"] is False
    shards = wf["jobs"]["reconcile"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(len(shards))) and len(shards) > 1
    job = wf["jobs"]["reconcile"]
    step = next(s for s in job["steps"] if "clmgit reconcile" in s.get("run", ""))
    seen = []
    for combo in matrix_combos(job):
        (argv,) = clmgit_calls(wf, job, step, combo, tmp_path)
        spec = argv[argv.index("--shard") + 1]
        assert spec == f"{combo['shard']}/{len(shards)}"
        parse_shard(spec)  # the reconcile command's own check of I/N
        seen.append(spec)
    assert len(set(seen)) == len(shards)
    sync = wf["jobs"]["sync-branches"]
    assert sync["needs"] == "reconcile"
    runs = [s["run"] for s in sync["steps"] if "run" in s]
    assert "clmgit sync-branches --push" in runs


@pytest.mark.parametrize(("name", "job_id", "index", "combo"), bash_steps())
def test_every_clmgit_command_parses_with_the_real_cli(
    name: str, job_id: str, index: int, combo: dict[str, Any], tmp_path: Path
) -> None:
    wf = load(name)
    job = wf["jobs"][job_id]
    step = job["steps"][index]
    calls = clmgit_calls(wf, job, step, combo, tmp_path)
    assert calls, "the step's clmgit line did not run"
    for argv in calls:
        parse(argv)


def test_the_commands_are_the_intended_ones(tmp_path: Path) -> None:
    """What each workflow runs, as bash expands it with the sample values."""
    found: dict[str, list[list[str]]] = {}
    for name, job_id, index, combo in bash_steps():
        wf = load(name)
        job = wf["jobs"][job_id]
        calls = clmgit_calls(wf, job, job["steps"][index], combo, tmp_path)
        found.setdefault(name, []).extend(calls)
    assert found["promote.yml"] == [
        ["promote", "alpha", "beta", "--group", "canary", "--group", "default", "--pr"]
    ]
    assert found["preview.yml"] == [
        ["diff", "alpha", "beta", "--sha", SHA, "--group", "canary"],
        ["diff", "dev", "alpha", "--sha", SHA],
    ]
    assert [c[0] for c in found["reconcile.yml"]] == ["reconcile"] * 4 + ["sync-branches"]
    assert {parse(c) for calls in found.values() for c in calls} == {
        "promote",
        "diff",
        "reconcile",
        "sync-branches",
    }
