"""The reusable GitHub workflows in .github/workflows/, the composite action action.yml, and the
thin caller workflows of examples/github-workflows/ that a config repo copies.

Every file validates against SchemaStore's published schemas (github-workflow.json and
github-action.json, as vendored by check-jsonschema). Every `clmgit` command in them parses
with the real CLI: the commands are taken from the steps' scripts as bash really expands them —
`${{ … }}` expressions are replaced by sample values (as the runner replaces them in the text),
the step's environment is set, the script is run from a file by the shell GitHub would choose
for it (`bash -e` when none is set, `bash --noprofile --norc -eo pipefail` for `bash`), and
`clmgit` is a shell function that records its arguments, or a stand-in program that fails.
The security rules (control-branch only reconcile, least-privilege permissions, secrets only in
the steps that use them, actions and callers pinned by commit SHA) are checked on the files
themselves, and the callers' triggers are checked against the example config repo's channels.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import typer.main
import yaml

from clmgit.cli import app

ROOT = Path(__file__).resolve().parents[2]
REUSABLE = ROOT / ".github" / "workflows"
EXAMPLES = ROOT / "examples" / "github-workflows"
ACTION = ROOT / "action.yml"
NAMES = ("promote.yml", "preview.yml", "reconcile.yml")
ALL_WORKFLOWS = sorted([*REUSABLE.glob("*.yml"), *EXAMPLES.glob("*.yml")])
SHA = "0123456789abcdef0123456789abcdef01234567"
#: Sample values of the expressions whose value shapes a command line.
SAMPLES = {
    "inputs.source": "alpha",
    "inputs.target": "beta",
    "inputs.groups": "canary, default",
    "inputs.clmgit-version": "v0.1.0",
    "inputs.command": "status --channel beta",
    "steps.find.outputs.previews": f"alpha beta canary main={SHA} addons={SHA}\ndev alpha - {SHA}",
    # The HTTP registry mode (the file mode is tested on its own).
    "inputs.registry-url": "https://registry.example",
    "steps.app.outputs.token": "",  # no GitHub App: GITHUB_TOKEN
}
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
FROM_NEEDS = re.compile(r"\$\{\{\s*fromJSON\(needs\.([\w-]+)\.outputs\.([\w-]+)\)\s*\}\}")
INVOCATION = re.compile(r"^\s*clmgit\s", re.MULTILINE)
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")
CALLER = re.compile(
    r"^YOUR-ORG/clmgit/\.github/workflows/(?P<file>[\w-]+\.yml)@(?P<sha>[0-9a-f]{40})$"
)
#: The command GitHub runs a step's script file with, by the step's `shell` (none: bash -e).
SHELLS = {
    None: ["bash", "-e"],
    "bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail"],
    "sh": ["sh", "-e"],
    "python": [sys.executable],
}


def read(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    if True in data:  # YAML 1.1 reads the key `on` as true
        data["on"] = data.pop(True)
    return data


def schema(name: str) -> dict[str, Any]:
    vendor = resources.files("check_jsonschema.builtin_schemas.vendor")
    return json.loads((vendor / name).read_text())


def reusable(name: str) -> dict[str, Any]:
    return read(REUSABLE / name)


def inputs_of(wf: dict[str, Any]) -> dict[str, Any]:
    return (wf["on"].get("workflow_call") or {}).get("inputs") or {}


# --- evaluating the expressions that shape a command line -----------------------------------


def evaluate(expr: str, ctx: dict[str, Any]) -> str:
    if "||" in expr:  # the first operand that is not empty
        for part in expr.split("||"):
            value = evaluate(part.strip(), ctx)
            if value:
                return value
        return ""
    if expr in SAMPLES:
        return SAMPLES[expr]
    if expr.startswith("matrix."):
        return str(ctx["combo"][expr.removeprefix("matrix.")])
    if expr == "strategy.job-total":
        return str(ctx["total"])
    if expr.startswith("inputs."):
        spec = ctx["inputs"][expr.removeprefix("inputs.")]  # KeyError: an undeclared input
        return str(spec.get("default", ""))
    if expr.startswith("steps."):
        raise KeyError(f"add a sample for {expr}")
    return "placeholder"  # github.*, secrets.*, vars.*, runner.*: shape no command line


def substitute(text: str, ctx: dict[str, Any]) -> str:
    return EXPRESSION.sub(lambda m: evaluate(m.group(1), ctx), text)


def shell_of(wf: dict[str, Any], job_id: str, step: dict[str, Any]) -> list[str]:
    """The command GitHub runs the step's script with: the step's shell, else the job's
    `defaults.run.shell`, else the workflow's, else its default `bash -e {0}`."""
    levels = (wf["jobs"][job_id].get("defaults"), wf.get("defaults"))
    chosen = [step.get("shell"), *(((d or {}).get("run") or {}).get("shell") for d in levels)]
    return SHELLS[next((s for s in chosen if s), None)]


def context(wf: dict[str, Any], job_id: str, step: dict[str, Any], combo: dict[str, Any]
            | None = None, total: int = 1) -> dict[str, Any]:
    return {"inputs": inputs_of(wf), "combo": combo or {}, "total": total,
            "shell": shell_of(wf, job_id, step)}


def run_step(
    step: dict[str, Any], env: dict[str, Any], ctx: dict[str, Any], tmp: Path,
    *, shims: tuple[str, ...] = ("clmgit", "python"), path: str = "", cwd: Path | None = None,
) -> tuple[int, list[list[str]], dict[str, str]]:
    """Run a step's script as the runner would (from a file, by the shell GitHub chooses),
    with `shims` recording their argv instead of running.

    Returns the exit code, the argv of each shimmed call and the step's outputs."""
    record, output = tmp / "argv", tmp / "output"
    output.write_text("")
    shim = "".join(
        f"{cmd}() {{ printf '%s\\0' {cmd} \"$@\" >> {record}; printf '\\036\\0' >> {record}; }}\n"
        for cmd in shims
    )
    shell = ctx.get("shell", SHELLS["bash"])
    script = tmp / "step.sh"
    script.write_text((shim if shell != SHELLS["python"] else "") + substitute(step["run"], ctx))
    run_env = {k: substitute(str(v), ctx) for k, v in env.items()}
    run_env.update(
        PATH=path + os.environ["PATH"],
        RUNNER_TEMP=str(tmp),
        HOME=str(tmp),
        GITHUB_OUTPUT=str(output),
        GITHUB_ENV=str(tmp / "env"),
        GITHUB_STEP_SUMMARY=str(tmp / "summary.md"),
        GITHUB_SERVER_URL="https://github.com",
    )
    proc = subprocess.run(
        [*shell, str(script)],
        env=run_env,
        cwd=cwd or tmp,
        capture_output=True,
        text=True,
    )
    words = record.read_text().split("\0") if record.exists() else []
    record.unlink(missing_ok=True)
    calls: list[list[str]] = []
    argv: list[str] = []
    for w in words[:-1]:
        if w == "\x1e":
            calls.append(argv)
            argv = []
        else:
            argv.append(w)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    if "<<CLMGIT_EOF" in output.read_text():  # a multi-line output
        name, rest = output.read_text().split("<<CLMGIT_EOF\n", 1)
        outputs = {name: rest.split("\nCLMGIT_EOF\n", 1)[0]}
    return proc.returncode, calls, outputs


def job_outputs(wf: dict[str, Any], job_id: str, tmp: Path) -> dict[str, str]:
    """What the job's run steps write to GITHUB_OUTPUT, with the inputs' defaults."""
    found: dict[str, str] = {}
    for step in wf["jobs"][job_id]["steps"]:
        if "id" in step and "run" in step and step.get("shell", "bash") == "bash":
            ctx = context(wf, job_id, step)
            code, _, outputs = run_step(step, step.get("env") or {}, ctx, tmp)
            if code == 0:
                found.update(outputs)
    return found


def matrix_combos(wf: dict[str, Any], job_id: str, tmp: Path) -> list[dict[str, Any]]:
    matrix = (wf["jobs"][job_id].get("strategy") or {}).get("matrix") or {}
    values = {}
    for key, value in matrix.items():
        m = re.fullmatch(
            r"\$\{\{\s*fromJSON\(needs\.([\w-]+)\.outputs\.([\w-]+)\)\s*\}\}", str(value)
        )
        values[key] = json.loads(job_outputs(wf, m[1], tmp)[m[2]]) if m else value
    return [dict(zip(values, combo, strict=True)) for combo in itertools.product(*values.values())]


def clmgit_calls(
    wf: dict[str, Any], job_id: str, step: dict[str, Any], combo: dict[str, Any], tmp: Path
) -> list[list[str]]:
    """The argv of every clmgit call the step's bash script makes."""
    job = wf["jobs"][job_id]
    total = len(matrix_combos(wf, job_id, tmp)) or 1
    env = {**(wf.get("env") or {}), **(job.get("env") or {}), **(step.get("env") or {})}
    ctx = context(wf, job_id, step, combo, total)
    code, calls, _ = run_step(step, env, ctx, tmp)
    assert code == 0, f"{job_id}: {step.get('name')} exited {code}"
    return [argv[1:] for argv in calls if argv[0] == "clmgit"]


def parse(argv: list[str]) -> str:
    """Parse argv with the real CLI (no command runs); returns the subcommand's name."""
    group = typer.main.get_command(app)
    ctx = group.make_context("clmgit", list(argv), resilient_parsing=False)
    rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    name, command, args = group.resolve_command(ctx, rest)  # type: ignore[attr-defined]  # a Group, typed Command
    assert command is not None and name is not None
    command.make_context(name, args, parent=ctx, resilient_parsing=False)
    return name


def action_as_workflow() -> dict[str, Any]:
    """action.yml's composite steps as one job, so the same harness runs them."""
    action = read(ACTION)
    inputs = {k: {"default": v.get("default", "")} for k, v in action["inputs"].items()}
    return {"on": {"workflow_call": {"inputs": inputs}}, "jobs": {"action": action["runs"]}}


def clmgit_steps() -> list[tuple[str, str, int]]:
    """The bash steps that call clmgit (only those run here: others install or fetch)."""
    cases = []
    for name in [*NAMES, "action.yml"]:
        wf = action_as_workflow() if name == "action.yml" else reusable(name)
        for job_id, job in wf["jobs"].items():
            for i, step in enumerate(job["steps"]):
                if INVOCATION.search(step.get("run", "")) and step.get("shell", "bash") == "bash":
                    cases.append((name, job_id, i))
    return cases


def load_any(name: str) -> dict[str, Any]:
    return action_as_workflow() if name == "action.yml" else reusable(name)


# --- schemas ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL_WORKFLOWS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_workflow_validates_against_schemastore(path: Path) -> None:
    validator = jsonschema.Draft7Validator(schema("github-workflows.json"))
    errors = [f"{list(e.path)}: {e.message[:200]}" for e in validator.iter_errors(read(path))]
    assert errors == []


def test_action_validates_against_schemastore() -> None:
    validator = jsonschema.Draft7Validator(schema("github-actions.json"))
    errors = [f"{list(e.path)}: {e.message[:200]}" for e in validator.iter_errors(read(ACTION))]
    assert errors == []


def test_the_schemas_reject_what_github_rejects() -> None:
    """The validation is real: a job without runs-on and a step with both run and uses fail."""
    validator = jsonschema.Draft7Validator(schema("github-workflows.json"))
    bad = reusable("reconcile.yml")
    del bad["jobs"]["check"]["runs-on"]
    assert list(validator.iter_errors(bad))
    action = read(ACTION)
    action["runs"]["steps"][1]["uses"] = "actions/checkout@" + SHA
    assert list(jsonschema.Draft7Validator(schema("github-actions.json")).iter_errors(action))


# --- supply chain and permissions -------------------------------------------------------------


def every_step(path: Path) -> list[dict[str, Any]]:
    data = read(path)
    if path == ACTION:
        return list(data["runs"]["steps"])
    return [s for job in data["jobs"].values() for s in job.get("steps", [])]


@pytest.mark.parametrize("path", [*sorted(REUSABLE.glob("*.yml")), ACTION], ids=lambda p: p.name)
def test_actions_are_pinned_by_commit_sha(path: Path) -> None:
    uses = [s["uses"] for s in every_step(path) if "uses" in s]
    assert uses and all(PINNED.match(u) for u in uses), uses
    for line in path.read_text().splitlines():  # the tag the SHA stands for, for humans
        if re.search(r"uses: \S+@[0-9a-f]{40}", line):
            assert re.search(r"# v\d", line), line


@pytest.mark.parametrize("name", NAMES)
def test_reusable_workflows_grant_each_job_only_what_it_needs(name: str) -> None:
    wf = reusable(name)
    assert list(wf["on"]) == ["workflow_call"]
    assert wf["permissions"] == {}  # nothing by default; each job asks
    for job_id, job in wf["jobs"].items():
        assert "permissions" in job, job_id
        assert all(v in ("read", "write", "none") for v in job["permissions"].values())
        if job["permissions"].get("id-token") == "write":
            assert (name, job_id) in {("reconcile.yml", "reconcile"),
                                       ("reconcile.yml", "reconcile-file")}
        # Only the file registry's reconcile writes, and only with the AWS credentials it needs.
        if job["permissions"].get("contents") == "write" and "id-token" in job["permissions"]:
            assert (name, job_id) == ("reconcile.yml", "reconcile-file")
    assert wf["concurrency"]["group"].startswith("clmgit-")


def test_ci_reads_only() -> None:
    ci = read(REUSABLE / "ci.yml")
    assert ci["permissions"] == {"contents": "read"}
    assert all(job["permissions"] == {"contents": "read"} for job in ci["jobs"].values())


@pytest.mark.parametrize("name", NAMES)
def test_secrets_reach_only_the_steps_that_use_them(name: str) -> None:
    wf = reusable(name)
    declared = set(wf["on"]["workflow_call"].get("secrets") or {})
    assert "secrets." not in json.dumps({k: v for k, v in wf.items() if k != "jobs"})
    used = set()
    for job_id, job in wf["jobs"].items():
        assert "secrets." not in json.dumps(job.get("env") or {}), job_id
        for step in job["steps"]:
            assert "secrets." not in step.get("run", ""), step.get("name")
            used |= set(re.findall(r"secrets\.([\w-]+)", json.dumps(step)))
    assert used == declared  # every declared secret is used, none undeclared


# --- the callers -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_example_is_a_thin_caller_of_the_reusable_workflow(name: str) -> None:
    caller = read(EXAMPLES / name)
    ((job_id, job),) = caller["jobs"].items()
    m = CALLER.match(job["uses"])
    assert m and m["file"] == name, job["uses"]
    called = reusable(name)["on"]["workflow_call"]
    inputs, secrets = called.get("inputs") or {}, called.get("secrets") or {}
    given, passed = job.get("with") or {}, job.get("secrets") or {}
    assert set(given) <= set(inputs) and set(passed) <= set(secrets)
    assert {k for k, v in inputs.items() if v.get("required")} <= set(given)
    assert {k for k, v in secrets.items() if v.get("required")} <= set(passed)
    for key, value in given.items():
        if inputs[key]["type"] == "number":
            assert isinstance(value, int), key
    # The caller grants exactly what the called jobs may ask for (it caps them).
    asked: dict[str, str] = {}
    for called_job in reusable(name)["jobs"].values():
        for scope, level in called_job["permissions"].items():
            asked[scope] = max(asked.get(scope, "none"), level, key=["none", "read", "write"].index)
    assert job["permissions"] == asked


def test_callers_pin_one_commit_of_clmgit_that_exists_and_accepts_them() -> None:
    """`uses:` and `clmgit-version` name the same commit of this repository, and the reusable
    workflow as it is at that commit takes every input and secret the caller passes."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout of clmgit")
    for name in NAMES:
        job = next(iter(read(EXAMPLES / name)["jobs"].values()))
        m = CALLER.match(job["uses"])
        assert m, job["uses"]
        assert job["with"]["clmgit-version"] == m["sha"], name
        assert job["with"]["clmgit-repository"] == "YOUR-ORG/clmgit"
        shown = subprocess.run(["git", "show", f"{m['sha']}:.github/workflows/{name}"], cwd=ROOT,
                               capture_output=True, text=True)
        assert shown.returncode == 0, (
            f"{name} pins {m['sha'][:7]}, which is not a commit of this repository with that "
            "workflow: pin the callers to `git log -1 --format=%H -- .github/workflows`")
        then = yaml.safe_load(shown.stdout)
        called = (then.get("on") or then[True])["workflow_call"]
        assert set(job["with"]) <= set(called["inputs"]), name
        assert set(job.get("secrets") or {}) <= set(called.get("secrets") or {}), name


def test_promote_caller_is_dispatched_by_hand() -> None:
    caller = read(EXAMPLES / "promote.yml")
    assert list(caller["on"]) == ["workflow_dispatch"]
    inputs = caller["on"]["workflow_dispatch"]["inputs"]
    assert set(inputs) == {"source", "target", "groups"}
    assert caller["jobs"]["promote"]["with"]["app-id"] == "${{ vars.CLMGIT_APP_ID }}"


def test_preview_caller_runs_on_pull_request_not_pull_request_target() -> None:
    caller = read(EXAMPLES / "preview.yml")
    assert list(caller["on"]) == ["pull_request"]
    assert sorted(caller["on"]["pull_request"]["paths"]) == ["channels/**", "cluster/**"]


@pytest.mark.parametrize(("changed", "runs"), [
    (["channels/beta.yaml"], True),  # a promotion or rollback pull request
    (["cluster/manifests/app/deployment.yaml"], True),  # a change on a channel branch
    (["README.md", ".github/workflows/reconcile.yml"], False),
    (["clusters.yaml"], False),  # the registry: reconcile's business, nothing to diff
])
def test_preview_caller_triggers_on_the_files_that_a_diff_shows(
        changed: list[str], runs: bool) -> None:
    """GitHub's `paths` filter (`**` matches across folders) as the runner applies it."""
    import fnmatch

    paths = read(EXAMPLES / "preview.yml")["on"]["pull_request"]["paths"]
    assert any(fnmatch.fnmatchcase(f, p) for f in changed for p in paths) == runs


def test_reconcile_caller_triggers_on_every_branch_whose_push_changes_a_cluster(
        tmp_path: Path) -> None:
    """Its push branches are the control branch and the branches of the example config repo's
    channels that follow their branch (no pins); each of them passes the ref check, and a
    push to any other channel branch (moved by sync-branches) starts nothing."""
    caller = read(EXAMPLES / "reconcile.yml")
    given = caller["jobs"]["reconcile"]["with"]
    follow = given["follow-branches"].replace(",", " ").split()
    assert caller["on"]["push"]["branches"] == [given["control-branch"], *follow]
    channels = [yaml.safe_load(p.read_text())
                for p in sorted((ROOT / "examples/config-repo/channels").glob("*.yaml"))]
    following = {c.get("branch", c["channel"]) for c in channels if not c.get("source")}
    pinned = {c.get("branch", c["channel"]) for c in channels if c.get("source")}
    assert following == set(follow) == {"dev"}
    wf = reusable("reconcile.yml")
    step = named_step(wf, "check", "Refuse")
    for branch in [*caller["on"]["push"]["branches"], *pinned, "feature"]:
        triggers = branch in caller["on"]["push"]["branches"]
        env = {"REF": f"refs/heads/{branch}", "CONTROL": given["control-branch"],
               "FOLLOW": given["follow-branches"]}
        code = run_step(step, env, context(wf, "check", step), tmp_path)[0]
        assert (code == 0) == triggers, branch


# --- semantics of the reusable workflows --------------------------------------------------


def named_step(wf: dict[str, Any], job_id: str, prefix: str) -> dict[str, Any]:
    return next(s for s in wf["jobs"][job_id]["steps"] if s.get("name", "").startswith(prefix))


@pytest.mark.parametrize(
    ("ref", "follow", "code"),
    [("refs/heads/main", "", 0), ("refs/heads/feature", "", 1), ("refs/heads/dev", "", 1),
     ("refs/heads/dev", "dev", 0), ("refs/heads/dev", "qa, dev", 0),
     ("refs/heads/dev-old", "dev", 1), ("refs/tags/dev", "dev", 1)],
)
def test_reconcile_runs_only_from_the_control_branch_or_a_followed_one(
        ref: str, follow: str, code: int, tmp_path: Path) -> None:
    wf = reusable("reconcile.yml")
    step = named_step(wf, "check", "Refuse")
    env = {"REF": ref, "CONTROL": "${{ inputs.control-branch }}", "FOLLOW": follow}
    got = run_step(step, env, context(wf, "check", step), tmp_path)[0]
    assert got == code
    # Every job that holds credentials waits for the check.
    assert wf["jobs"]["reconcile"]["needs"] == "check"
    assert wf["jobs"]["reconcile-file"]["needs"] == "check"
    for job_id in ("sync-branches", "report"):
        assert "needs.check.result == 'success'" in wf["jobs"][job_id]["if"]
    text = (REUSABLE / "reconcile.yml").read_text()
    assert "ref:refs/heads/main" in text  # the role's documented trust condition


def test_reconcile_shards_never_overlap_and_restore_the_compile_cache(tmp_path: Path) -> None:
    from clmgit.reconcile.plan import parse_shard

    wf = reusable("reconcile.yml")
    assert wf["concurrency"]["cancel-in-progress"] is False
    job = wf["jobs"]["reconcile"]
    assert job["permissions"] == {"contents": "read", "id-token": "write"}
    assert job["strategy"]["fail-fast"] is False
    combos = matrix_combos(wf, "reconcile", tmp_path)
    assert [c["shard"] for c in combos] == list(range(inputs_of(wf)["shards"]["default"]))
    step = named_step(wf, "reconcile", "Reconcile shard")
    specs = []
    for combo in combos:
        (argv,) = clmgit_calls(wf, "reconcile", step, combo, tmp_path)
        spec = argv[argv.index("--shard") + 1]
        parse_shard(spec)  # the reconcile command's own check of I/N
        specs.append(spec)
    assert specs == [f"{i}/{len(combos)}" for i in range(len(combos))]
    assert (tmp_path / "summary.md").read_text().count("### clmgit reconcile, shard") == 4
    cache = [s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
    # compiled templates and the parsed registry: a cold CI run starts warm
    assert cache and cache[0]["with"]["path"].split() == [
        "~/.cache/clmgit/templates", "~/.cache/clmgit/yaml"]
    assert cache[0]["with"]["restore-keys"]
    from clmgit.cache import cache_dir

    assert {cache_dir("templates").name, cache_dir("yaml").name} == {"templates", "yaml"}
    for job_id in ("reconcile-file", "sync-branches", "report"):
        steps = wf["jobs"][job_id]["steps"]
        assert any(s.get("uses", "").startswith("actions/cache") and "~/.cache/clmgit/yaml"
                   in s["with"]["path"] for s in steps), job_id


def test_a_failing_shard_fails_its_step_after_writing_the_summary(tmp_path: Path) -> None:
    wf = reusable("reconcile.yml")
    step = dict(named_step(wf, "reconcile", "Reconcile shard"))
    # reconcile exits 4 when a cluster failed: the pipeline through `tee` must keep that code.
    failing = "(exit 4) | clmgit reconcile --shard"
    step["run"] = step["run"].replace("clmgit reconcile --shard", failing, 1)
    ctx = context(wf, "reconcile", step, {"shard": 0}, 4)
    code, _, _ = run_step(step, step["env"], ctx, tmp_path)
    assert code == 4 and (tmp_path / "summary.md").read_text().startswith(
        "### clmgit reconcile, shard 0/4")


#: What a commit subject or a file of a pull request can put into clmgit's output.
HOSTILE = "plan\n```\n<img src=https://tracker.example/p.png>\n# not a heading\n[x](https://e.example)\n"


@pytest.mark.parametrize(("name", "job_id", "prefix"), [
    ("promote.yml", "promote", "Open the promotion"),
    ("reconcile.yml", "reconcile", "Reconcile shard"),
    ("reconcile.yml", "reconcile-file", "Reconcile every cluster"),
    ("reconcile.yml", "sync-branches", "Fast-forward"),
    ("preview.yml", "preview", "Preview"),
])
def test_clmgit_output_in_a_step_summary_stays_text(
    name: str, job_id: str, prefix: str, tmp_path: Path
) -> None:
    """Output that quotes a pull request (commit subjects, file names) is shown as code: no
    line of it closes the block, so nothing in it renders as Markdown or HTML."""
    from markdown_it import MarkdownIt

    wf = reusable(name)
    step = named_step(wf, job_id, prefix)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "clmgit").write_text('#!/bin/sh\nprintf "%s" "$HOSTILE"\n')
    (bindir / "clmgit").chmod(0o755)
    env = {k: v for k, v in step.get("env", {}).items() if k != "PREVIEWS"}
    env.update(HOSTILE=HOSTILE, PREVIEWS=f"dev alpha - {'a' * 40}")
    ctx = context(wf, job_id, step, {"shard": 0}, 1)
    code, _, _ = run_step(step, env, ctx, tmp_path, shims=("python",), path=f"{bindir}:")
    assert code == 0
    summary = (tmp_path / "summary.md").read_text()
    if name == "preview.yml":  # the preview is written to a file for the comment, then shown
        summary = (tmp_path / "preview.md").read_text()
    html = MarkdownIt("commonmark").render(summary)
    assert "<img" not in html and "<a " not in html and "<h1>" not in html, html
    assert "&lt;img src=https://tracker.example/p.png&gt;" in html


@pytest.mark.parametrize(
    ("url", "mode", "shards"),
    [("", "file", [0]), ("https://registry.example", "http", [0, 1, 2, 3])],
)
def test_the_registry_mode_follows_registry_url(
        url: str, mode: str, shards: list[int], tmp_path: Path) -> None:
    wf = reusable("reconcile.yml")
    step = named_step(wf, "check", "Registry mode")
    env = {**step["env"], "REGISTRY_URL": url}
    code, _, outputs = run_step(step, env, context(wf, "check", step), tmp_path)
    assert code == 0 and outputs == {"mode": mode, "shards": json.dumps(shards)}
    assert wf["jobs"]["reconcile"]["if"] == "needs.check.outputs.mode == 'http'"
    assert wf["jobs"]["reconcile-file"]["if"] == "needs.check.outputs.mode == 'file'"
    # The file mode's one job pushes the state it records, with the push token if given.
    job = wf["jobs"]["reconcile-file"]
    assert "strategy" not in job and job["permissions"]["contents"] == "write"
    assert job["steps"][0]["with"]["token"] == "${{ secrets.push-token || github.token }}"
    assert "--push" in named_step(wf, "reconcile-file", "Reconcile")["run"]


@pytest.mark.parametrize(
    ("roles", "code"),
    [("", 0), ('{"123456789012": "arn:aws:iam::123456789012:role/clmgit"}', 0),
     ("{not json", 1), ('["arn:aws:iam::123456789012:role/x"]', 1),
     ('{"1234": "arn:aws:iam::1234:role/x"}', 1)],
)
def test_account_roles_must_be_a_json_object_of_accounts_to_arns(
        roles: str, code: int, tmp_path: Path) -> None:
    wf = reusable("reconcile.yml")
    step = named_step(wf, "check", "Registry mode")
    env = {**step["env"], "ROLES": roles}
    assert run_step(step, env, context(wf, "check", step), tmp_path)[0] == code
    reconcile = named_step(wf, "reconcile", "Reconcile shard")
    assert reconcile["env"]["CLMGIT_AWS_ROLES"] == "${{ inputs.aws-account-roles }}"
    assert reconcile["env"]["CLMGIT_KUBE_AUTH"] == "${{ inputs.kube-auth }}"


def test_kube_credentials_reach_clmgit_as_files_only_the_job_reads(tmp_path: Path) -> None:
    wf = reusable("reconcile.yml")
    step = named_step(wf, "reconcile", "Kubernetes credentials")
    env = {"KUBECONFIG_TEXT": "apiVersion: v1\nkind: Config\n", "KUBE_TOKEN": "tok-123"}
    code, _, _ = run_step(step, env, context(wf, "reconcile", step), tmp_path)
    assert code == 0
    exported = dict(ln.split("=", 1) for ln in (tmp_path / "env").read_text().splitlines())
    assert set(exported) == {"CLMGIT_KUBECONFIG", "CLMGIT_TOKEN_FILE"}  # paths, not secrets
    assert Path(exported["CLMGIT_TOKEN_FILE"]).read_text() == "tok-123"
    for path in exported.values():
        assert Path(path).stat().st_mode & 0o777 == 0o600
    (tmp_path / "env").unlink()
    assert run_step(step, {"KUBECONFIG_TEXT": "", "KUBE_TOKEN": ""},
                    context(wf, "reconcile", step), tmp_path)[0] == 0
    assert not (tmp_path / "env").exists()  # no secret given: clmgit's own choice (kube-auth)


def test_sources_token_answers_git_from_the_environment(tmp_path: Path) -> None:
    """The helper the workflows install gives git the token for the server's URLs, and
    nothing when no token is set; the token itself is never written to a file."""
    wf = reusable("reconcile.yml")
    step = named_step(wf, "reconcile", "Config sources")
    assert run_step(step, {}, context(wf, "reconcile", step), tmp_path)[0] == 0
    assert "tok-src" not in (tmp_path / ".gitconfig").read_text()

    def fill(token: str) -> str:
        env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "CLMGIT_SOURCES_TOKEN": token,
               "GIT_CONFIG_NOSYSTEM": "1"}
        return subprocess.run(["git", "credential", "fill"], env=env, capture_output=True,
                              text=True, input="protocol=https\nhost=github.com\n\n").stdout

    assert "password=tok-src" in fill("tok-src") and "username=x-access-token" in fill("tok-src")
    for path in (REUSABLE / "reconcile.yml", REUSABLE / "preview.yml", REUSABLE / "promote.yml"):
        wf = read(path)
        for job_id, job in wf["jobs"].items():
            runs = [s.get("run", "") for s in job["steps"]]
            if any(INVOCATION.search(r) for r in runs):
                assert any("credential.$GITHUB_SERVER_URL.helper" in r for r in runs), job_id


def test_sync_branches_pushes_with_the_push_token_if_given() -> None:
    wf = reusable("reconcile.yml")
    job = wf["jobs"]["sync-branches"]
    assert job["permissions"] == {"contents": "write"}
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["token"] == "${{ secrets.push-token || github.token }}"
    assert "bypass" in wf["on"]["workflow_call"]["secrets"]["push-token"]["description"]


def test_promote_supports_an_app_token_and_never_cancels(tmp_path: Path) -> None:
    wf = reusable("promote.yml")
    group = wf["concurrency"]["group"]
    assert wf["concurrency"]["cancel-in-progress"] is False
    for part in ("inputs.source", "inputs.target", "inputs.groups"):
        assert part in group  # another group's promotion never replaces a queued one
    steps = wf["jobs"]["promote"]["steps"]
    app_step = steps[0]
    assert app_step["uses"].startswith("actions/create-github-app-token@")
    assert app_step["if"] == "inputs.app-id != ''"
    pr_step = named_step(wf, "promote", "Open the promotion")
    assert pr_step["env"]["GITHUB_TOKEN"] == "${{ steps.app.outputs.token || github.token }}"


@pytest.mark.parametrize(("event", "code"), [("pull_request", 0), ("pull_request_target", 1)])
def test_preview_refuses_pull_request_target(event: str, code: int, tmp_path: Path) -> None:
    wf = reusable("preview.yml")
    step = named_step(wf, "preview", "Refuse")
    ctx = context(wf, "preview", step)
    assert run_step(step, {"EVENT": event}, ctx, tmp_path)[0] == code


def git_repo(path: Path) -> Any:
    def git(*args: str) -> str:
        env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
        return subprocess.run(["git", *args], cwd=path, env=env, check=True,
                              capture_output=True, text=True).stdout.strip()
    path.mkdir()
    git("init", "--quiet", "--initial-branch=main")
    return git


@pytest.mark.parametrize("several", [True, False])
def test_preview_finds_moved_pins_of_every_source_and_passes_a_sha_each(
        several: bool, tmp_path: Path) -> None:
    """The pull request of a promotion moves a map pin: each source's SHA is a --sha of its
    own, and the whole of the preview step's command line parses with the real CLI."""
    repo = tmp_path / "repo"
    git = git_repo(repo)
    old = {"main": "1" * 40, "addons": "2" * 40} if several else "1" * 40
    new = {"main": "3" * 40, "addons": "4" * 40} if several else "3" * 40

    def channel(pin: object) -> str:
        return yaml.safe_dump({"channel": "beta", "source": "alpha", "groups": [
            {"name": "canary", "sha": pin}, {"name": "default", "sha": old}]}, sort_keys=False)

    (repo / "channels").mkdir()
    (repo / "channels/beta.yaml").write_text(channel(old))
    if several:
        (repo / "clmgit.yaml").write_text(
            "sources: [{name: main}, {name: addons, repo: https://example.com/addons.git}]\n")
    git("add", "-A")
    git("commit", "-qm", "Pins")
    git("checkout", "-qb", "promote")
    (repo / "channels/beta.yaml").write_text(channel(new))
    git("commit", "-qam", "promote(beta)")

    wf = reusable("preview.yml")
    find = named_step(wf, "preview", "Find")
    env = {"BASE_REF": "main", "CLMGIT_CONTROL_BRANCH": "main"}
    code, _, outputs = run_step(find, env, context(wf, "preview", find), tmp_path, cwd=repo)
    shas = " ".join(f"{k}={v}" for k, v in new.items()) if isinstance(new, dict) else new
    assert code == 0 and outputs == {"previews": f"alpha beta canary {shas}"}

    step = named_step(wf, "preview", "Preview")
    env = {**step["env"], "PREVIEWS": outputs["previews"]}
    code, calls, _ = run_step(step, env, context(wf, "preview", step), tmp_path)
    sha_args = (["--sha", f"main={'3' * 40}", "--sha", f"addons={'4' * 40}"] if several
                else ["--sha", "3" * 40])
    assert code == 0 and calls == [["clmgit", "diff", "alpha", "beta", *sha_args,
                                    "--group", "canary"]]
    parse(calls[0][1:])
    label = "main=3333333;addons=4444444" if several else "3333333"
    assert f"from `alpha` at `{label}`" in (tmp_path / "preview.md").read_text()


def test_preview_comments_only_on_own_repository_pull_requests_and_finds_its_own() -> None:
    wf = reusable("preview.yml")
    job = wf["jobs"]["preview"]
    assert "head.repo.full_name != github.repository" in job["env"]["FORK"]
    comment = named_step(wf, "preview", "Comment")
    assert "env.FORK == 'false'" in comment["if"]
    script = comment["with"]["script"]
    assert "c.user.login === process.env.AUTHOR" in script and "startsWith(marker)" in script
    assert comment["env"]["AUTHOR"] == "${{ inputs.comment-author }}"


@pytest.mark.parametrize(("version", "code"), [("v0.1.0", 0), (SHA, 0), ("main", 1), ("v1", 1)])
def test_clmgit_is_installed_pinned(version: str, code: int, tmp_path: Path) -> None:
    wf = reusable("reconcile.yml")
    step = named_step(wf, "reconcile", "Install clmgit")
    ctx = context(wf, "reconcile", step)
    env = {**step["env"], "CLMGIT_VERSION": version}
    got, calls, _ = run_step(step, env, ctx, tmp_path)
    assert got == code
    if code == 0:
        want = f"clmgit @ git+https://github.com/YOUR-ORG/clmgit@{version}"
        assert calls == [["python", "-m", "pip", "install", "--quiet", want]]
    installs = [
        s["run"]
        for p in [*REUSABLE.glob("*.yml"), ACTION]
        for s in every_step(p)
        if "pip install" in s.get("run", "")
    ]
    # One check and one install command, everywhere clmgit is installed.
    ways = {
        tuple(ln for ln in i.splitlines() if "=~" in ln or "pip install" in ln) for i in installs
    }
    assert len(installs) == 7 and len(ways) == 1


# --- a failing clmgit fails the job -----------------------------------------------------------


def failing_clmgit(tmp: Path, code: int) -> str:
    """A directory with a `clmgit` that prints a line and exits `code`, for PATH."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    stand_in = bin_dir / "clmgit"
    stand_in.write_text(f"#!/bin/sh\necho 'clmgit stand-in'\nexit {code}\n")
    stand_in.chmod(0o755)
    return f"{bin_dir}:"


@pytest.mark.parametrize("code", [1, 4, 5])
@pytest.mark.parametrize(("name", "job_id", "index"), clmgit_steps())
def test_a_failing_clmgit_fails_the_step_under_githubs_shell(
    name: str, job_id: str, index: int, code: int, tmp_path: Path
) -> None:
    """1: refused, 4: clusters failed, 5: leases skipped. Each step runs as GitHub runs it."""
    wf = load_any(name)
    step = wf["jobs"][job_id]["steps"][index]
    combo = (matrix_combos(wf, job_id, tmp_path) or [{}])[0]
    env = {**(wf.get("env") or {}), **(wf["jobs"][job_id].get("env") or {}),
           **(step.get("env") or {})}
    ctx = context(wf, job_id, step, combo, 4)
    got, _, _ = run_step(step, env, ctx, tmp_path, shims=("python",),
                         path=failing_clmgit(tmp_path, code))
    assert got != 0


def test_without_pipefail_the_same_scripts_would_pass(tmp_path: Path) -> None:
    """Why `defaults.run.shell: bash` matters: under GitHub's default `bash -e`, the steps
    that pipe clmgit into tee succeed when clmgit fails."""
    wf = reusable("reconcile.yml")
    assert all(read(REUSABLE / n)["defaults"] == {"run": {"shell": "bash"}} for n in NAMES)
    step = named_step(wf, "reconcile", "Reconcile shard")
    ctx = {**context(wf, "reconcile", step, {"shard": 0}, 4), "shell": SHELLS[None]}
    got, _, _ = run_step(step, step["env"], ctx, tmp_path, shims=("python",),
                         path=failing_clmgit(tmp_path, 4))
    assert got == 0


# --- every clmgit command line ---------------------------------------------------------------


@pytest.mark.parametrize(("name", "job_id", "index"), clmgit_steps())
def test_every_clmgit_command_parses_with_the_real_cli(
    name: str, job_id: str, index: int, tmp_path: Path
) -> None:
    wf = load_any(name)
    step = wf["jobs"][job_id]["steps"][index]
    for combo in matrix_combos(wf, job_id, tmp_path) or [{}]:
        calls = clmgit_calls(wf, job_id, step, combo, tmp_path)
        assert calls, "the step's clmgit line did not run"
        for argv in calls:
            parse(argv)


def test_the_commands_are_the_intended_ones(tmp_path: Path) -> None:
    """What each workflow runs, as bash expands it with the sample values."""
    found: dict[str, list[list[str]]] = {}
    for name, job_id, index in clmgit_steps():
        wf = load_any(name)
        step = wf["jobs"][job_id]["steps"][index]
        for combo in matrix_combos(wf, job_id, tmp_path) or [{}]:
            found.setdefault(name, []).extend(clmgit_calls(wf, job_id, step, combo, tmp_path))
    assert found["promote.yml"] == [
        ["promote", "alpha", "beta", "--group", "canary", "--group", "default", "--pr"]
    ]
    assert found["preview.yml"] == [
        ["diff", "alpha", "beta", "--sha", f"main={SHA}", "--sha", f"addons={SHA}",
         "--group", "canary"],
        ["diff", "dev", "alpha", "--sha", SHA],
    ]
    assert found["reconcile.yml"] == [
        *(["reconcile", "--shard", f"{i}/4", "--concurrency", "4"] for i in range(4)),
        ["reconcile", "--concurrency", "4", "--push"],
        ["sync-branches", "--push"],
        ["report", "--html", "clmgit-report.html", "--markdown"],
    ]
    assert found["action.yml"] == [["status", "--channel", "beta"]]
    assert {parse(c) for calls in found.values() for c in calls} == {
        "promote",
        "diff",
        "reconcile",
        "sync-branches",
        "status",
        "report",
    }


def test_the_docs_show_the_reconcile_caller_as_shipped() -> None:
    page = (ROOT / "docs" / "how-to" / "github-actions.md").read_text()
    block = page.split("```yaml\n", 1)[1].split("```", 1)[0]
    shown = yaml.safe_load(block)
    shown["on"] = shown.pop(True)
    assert shown == read(EXAMPLES / "reconcile.yml")
