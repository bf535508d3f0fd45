"""The command line: option parsing and result rendering only; the work is in the library.

Errors are mapped to exit codes in `main` alone (DESIGN.md §3): 1 refused or user error (one
line, no traceback), 2 usage, 3 unexpected (traceback only with --verbose), 4 clusters failed.
"""

from __future__ import annotations

import logging
import sys
import traceback
from enum import StrEnum
from typing import Annotated

import typer

from clmgit import output
from clmgit.errors import ClmgitError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="GitOps channel promotion and reconcile for fleets of Kubernetes clusters on AWS.",
)


class Format(StrEnum):
    table = "table"
    json = "json"


class Settings:
    """The common options, resolved once; the workspace is opened on first use."""

    def __init__(self, repo: str, registry: str | None, control_branch: str, verbose: bool):
        self.repo, self.registry, self.control_branch = repo, registry, control_branch
        self.verbose = verbose
        self._ws = None

    @property
    def ws(self):  # noqa: ANN201 - Workspace, imported lazily to keep start-up fast
        if self._ws is None:
            from clmgit.workspace import open_workspace

            self._ws = open_workspace(
                self.repo, registry=self.registry, control_branch=self.control_branch
            )
        return self._ws


_settings: Settings | None = None


def settings() -> Settings:
    assert _settings is not None
    return _settings


@app.callback()
def common(
    repo: Annotated[
        str, typer.Option(envvar="CLMGIT_REPO", help="Config repo: a path or git URL.")
    ] = ".",
    registry: Annotated[
        str | None,
        typer.Option(  # noqa: UP007 - typer needs Optional
            envvar="CLMGIT_REGISTRY",
            help="Cluster registry: a clusters.yaml path or an http(s) URL.",
        ),
    ] = None,
    control_branch: Annotated[str, typer.Option(envvar="CLMGIT_CONTROL_BRANCH")] = "main",
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    global _settings
    _settings = Settings(repo, registry, control_branch, verbose)
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


Groups = Annotated[list[str], typer.Option("--group", "-g", help="Only this group (repeatable).")]
OutputOpt = Annotated[Format, typer.Option("--output", "-o")]
PrOpt = Annotated[bool, typer.Option("--pr", help="Open a pull request instead (GITHUB_TOKEN).")]


@app.command()
def promote(
    source: str,
    target: str,
    group: Groups = [],  # noqa: B006 - typer reads the default, never mutates it
    sha: Annotated[str | None, typer.Option(help="Promote this SHA of the source.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run")] = False,
    force: Annotated[bool, typer.Option(help="Override forward-only and gates.")] = False,
    ignore_freeze: Annotated[bool, typer.Option("--ignore-freeze")] = False,
    push: Annotated[bool, typer.Option(help="Push to origin in one atomic push.")] = False,
    pr: PrOpt = False,
    out: OutputOpt = Format.table,
) -> None:
    """Pin the groups of TARGET to the commit SOURCE has."""
    from clmgit.promotion.promote import land_plan, plan_promotion

    ws = _plan_workspace(push=push, pr=pr)
    plan = plan_promotion(
        ws,
        source=source,
        target=target,
        groups=group,
        sha=sha,
        force=force,
        ignore_freeze=ignore_freeze,
    )
    _finish_plan(ws, plan, dry_run=dry_run, push=push, pr=pr, out=out, land=land_plan)


@app.command()
def rollback(
    channel: str,
    group: Groups = [],  # noqa: B006
    to: Annotated[str | None, typer.Option(help="Roll back to this SHA.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run")] = False,
    push: Annotated[bool, typer.Option()] = False,
    pr: PrOpt = False,
    out: OutputOpt = Format.table,
) -> None:
    """Pin the groups of CHANNEL back to their previous pin (or --to SHA)."""
    from clmgit.promotion.promote import land_plan, plan_rollback

    ws = _plan_workspace(push=push, pr=pr)
    plan = plan_rollback(ws, channel=channel, groups=group, to=to)
    _finish_plan(ws, plan, dry_run=dry_run, push=push, pr=pr, out=out, land=land_plan)


def _plan_workspace(*, push: bool, pr: bool):  # noqa: ANN202 - Workspace, imported lazily
    """With --pr the plan is made against the remote, where the pull request will land."""
    if push and pr:
        raise typer.BadParameter(
            "--push and --pr exclude each other: --push lands the change, --pr proposes it",
            param_hint="'--pr'",
        )
    if not pr:
        return settings().ws
    from clmgit.promotion.pr import remote_workspace

    return remote_workspace(settings().ws)


def _finish_plan(  # noqa: ANN001 - Workspace and Plan, imported lazily
    ws, plan, *, dry_run: bool, push: bool, pr: bool, out: Format, land
) -> None:
    from clmgit import views

    if plan.nothing_to_do:
        if out is Format.json:
            output.emit_json({"result": "nothing-to-do", "target": plan.target, "sha": plan.sha})
        else:
            output.line(f"{plan.target} already at {plan.sha[:7]}")
        return
    if pr:
        from clmgit.promotion.pr import open_pull_request

        opened = open_pull_request(ws, plan, dry_run=dry_run)
        views.pull_request(plan, opened, as_json=out is Format.json)
        return
    landed = None if dry_run else land(ws, plan, push=push)
    views.plan(plan, landed, as_json=out is Format.json)


@app.command()
def diff(
    source: str,
    target: str,
    group: Groups = [],  # noqa: B006
    cluster: Annotated[
        str | None, typer.Option(help="Only the group of this cluster, rendered for it.")
    ] = None,
    sha: Annotated[str | None, typer.Option()] = None,
    out: OutputOpt = Format.table,
) -> None:
    """Preview what `promote SOURCE TARGET` would bring, per group: the commits to cluster/ and
    the diff of one cluster's rendered stacks and manifests (secret-looking values masked)."""
    from clmgit import views
    from clmgit.promotion.preview import preview

    previews = preview(
        settings().ws, source=source, target=target, groups=group, cluster=cluster, sha=sha
    )
    views.previews(previews, as_json=out is Format.json)


@app.command()
def render(
    cluster: Annotated[str, typer.Option(help="Cluster id or alias.")],
    channel: Annotated[str | None, typer.Option(help="Render at this channel's pin.")] = None,
    sha: Annotated[str | None, typer.Option(help="Render at this commit.")] = None,
    out_dir: Annotated[str | None, typer.Option("--out", help="Write files here.")] = None,
) -> None:
    """Render every stack, node-pool stack, manifest and deletion list of one cluster."""
    from clmgit.config.output import render_text, render_to_files
    from clmgit.config.render import render_cluster
    from clmgit.config.source import GitConfigSource
    from clmgit.promotion.render_at import resolve_render

    ws = settings().ws
    record, at = resolve_render(ws, cluster=cluster, channel=channel, sha=sha)
    rendered = render_cluster(GitConfigSource(ws.repo), at, record)
    if out_dir:
        paths = render_to_files(rendered, out_dir)
        output.line(f"rendered {record.id} at {at[:7]}: {len(paths)} files in {out_dir}")
    else:
        sys.stdout.write(render_text(rendered))


@app.command()
def status(
    channel: Annotated[str | None, typer.Option()] = None,
    out: OutputOpt = Format.table,
) -> None:
    """Pinned versus applied version, per cluster."""
    from clmgit import views
    from clmgit.promotion.status import fleet_status

    views.states(fleet_status(settings().ws, channel), as_json=out is Format.json)


@app.command()
def history(
    channel: Annotated[str | None, typer.Argument()] = None,
    limit: Annotated[int, typer.Option(min=1)] = 50,
    out: OutputOpt = Format.table,
) -> None:
    """Promotions, rollbacks and freezes, newest first."""
    from clmgit import views
    from clmgit.promotion.history import history as read_history

    views.history(read_history(settings().ws, channel, limit=limit), as_json=out is Format.json)


@app.command()
def freeze(
    channel: str,
    reason: Annotated[str, typer.Option(help="Why; shown to whoever is refused.")],
    push: Annotated[bool, typer.Option()] = False,
) -> None:
    """Refuse promotions into CHANNEL until it is unfrozen."""
    _set_frozen(channel, frozen=True, reason=reason, push=push)


@app.command()
def unfreeze(channel: str, push: Annotated[bool, typer.Option()] = False) -> None:
    """Allow promotions into CHANNEL again."""
    _set_frozen(channel, frozen=False, reason="", push=push)


def _set_frozen(channel: str, *, frozen: bool, reason: str, push: bool) -> None:
    from clmgit.promotion.freeze import set_frozen

    landed = set_frozen(settings().ws, channel, frozen=frozen, reason=reason, push=push)
    word = "frozen" if frozen else "unfrozen"
    if landed is None:
        output.line(f"{channel} is already {word}")
    else:
        pushed = " and pushed" if landed.pushed else ""
        output.line(f"{channel} {word} in {landed.commit and landed.commit[:7]}{pushed}")


@app.command("sync-branches")
def sync_branches(
    push: Annotated[bool, typer.Option()] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run")] = False,
) -> None:
    """Move each channel branch to the SHA all of its groups are pinned to."""
    from clmgit.promotion.sync import sync_branches as sync

    moves = sync(settings().ws, push=push, dry_run=dry_run)
    if not moves:
        output.line("every channel branch is where its pins are")
    verb = "would move" if dry_run else "moved"
    for m in moves:
        output.line(f"{verb} {m.branch}: {(m.old or 'none')[:7]} -> {m.new[:7]}")


# --- reconcile ---------------------------------------------------------------------------------

DryRun = Annotated[bool, typer.Option("--dry-run", help="Render, show change sets and planned "
                                      "node rolls; change nothing, write nothing.")]
Token = Annotated[str | None, typer.Option(envvar="CLMGIT_TOKEN", show_envvar=True,
                                           help="Bearer token for the clusters' API servers.")]
Kubeconfig = Annotated[str | None, typer.Option(
    help="A kubeconfig with a context per cluster, named after its id or alias.")]
Concurrency = Annotated[int, typer.Option(min=1, help="Clusters worked on at once.")]


def _reconcile_command(work, *, out: Format, title: str, dry_run: bool = False,  # noqa: ANN001
                       concurrency: int = 1, token: str | None = None,
                       kubeconfig: str | None = None) -> None:
    """Run `work(workspace, options)` with a progress display, then show its results."""
    from clmgit import views
    from clmgit.reconcile.session import Options

    progress = views.Progress(enabled=out is not Format.json)
    options = Options(dry_run=dry_run, concurrency=concurrency, token=token or None,
                      kubeconfig=kubeconfig, on_plan=progress.plan, on_start=progress.start,
                      on_result=progress.result)
    try:
        results = work(settings().ws, options)
    finally:
        progress.stop()
    _show_results(results, out=out, title=title)


def _show_results(results, *, out: Format, title: str) -> None:  # noqa: ANN001
    import os

    from clmgit import views
    from clmgit.errors import ClustersFailed

    views.reconcile_results(results, as_json=out is Format.json)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        views.step_summary(results, summary, title=title)
    failed = [r for r in results if r.failed]
    if failed:
        names = ", ".join(r.alias or r.id for r in failed[:5])
        more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
        raise ClustersFailed(f"{len(failed)} cluster(s) failed: {names}{more}")


@app.command()
def reconcile(
    cluster: Annotated[list[str], typer.Option("--cluster", "-c",
                                               help="Only this cluster (id or alias; repeatable).")
                       ] = [],  # noqa: B006
    channel: Annotated[str | None, typer.Option(help="Only clusters of this channel.")] = None,
    shard: Annotated[str | None, typer.Option(
        help="Only shard I of N (0-based), by a stable hash of the cluster id.")] = None,
    concurrency: Concurrency = 4,
    dry_run: DryRun = False,
    token: Token = None,
    kubeconfig: Kubeconfig = None,
    out: OutputOpt = Format.table,
) -> None:
    """Bring every selected cluster to the version its channel pins; record it in the registry."""
    from clmgit.reconcile.plan import parse_shard
    from clmgit.reconcile.session import reconcile as run

    shard_spec = parse_shard(shard) if shard else None
    title = "clmgit reconcile" + (f" (shard {shard})" if shard else "") + (
        " (dry run)" if dry_run else "")
    _reconcile_command(
        lambda ws, options: run(ws, options, names=cluster, channel=channel, shard=shard_spec),
        out=out, title=title, dry_run=dry_run, concurrency=concurrency, token=token,
        kubeconfig=kubeconfig)


@app.command()
def provision(
    cluster: Annotated[str, typer.Option("--cluster", "-c", help="The cluster (id or alias).")],
    directory: Annotated[str, typer.Option(help="A working tree with a cluster/ directory.")],
    dry_run: DryRun = False,
    token: Token = None,
    kubeconfig: Kubeconfig = None,
    out: OutputOpt = Format.table,
) -> None:
    """Apply a working tree to one cluster directly, without git (CLM's provisioning mode)."""
    from pathlib import Path

    from clmgit.reconcile.session import provision as run

    _reconcile_command(
        lambda ws, options: [run(ws, options, name=cluster, directory=Path(directory))],
        out=out, title="clmgit provision", dry_run=dry_run, token=token, kubeconfig=kubeconfig)


@app.command()
def decommission(
    cluster: Annotated[str, typer.Option("--cluster", "-c", help="The cluster (id or alias).")],
    dry_run: DryRun = False,
    token: Token = None,
    kubeconfig: Kubeconfig = None,
    out: OutputOpt = Format.table,
) -> None:
    """Delete every stack of a cluster (the main stack last) and mark it decommissioned."""
    from clmgit.reconcile.session import decommission as run

    _reconcile_command(lambda ws, options: [run(ws, options, name=cluster)],
                       out=out, title="clmgit decommission", dry_run=dry_run, token=token,
                       kubeconfig=kubeconfig)


@app.command()
def controller(
    interval: Annotated[str, typer.Option(help="Pause between rounds, such as 10m or 90s.")
                        ] = "10m",
    concurrency: Concurrency = 4,
    token: Token = None,
    kubeconfig: Kubeconfig = None,
) -> None:
    """Fetch, reconcile, sleep; until SIGTERM. Each round's results go to stdout as JSON lines."""
    import json

    from clmgit.output import to_data
    from clmgit.promotion.channels import parse_duration
    from clmgit.reconcile.session import Options
    from clmgit.reconcile.session import controller as loop
    from clmgit.workspace import open_workspace

    pause = parse_duration(interval, "--interval").total_seconds()
    s = settings()
    options = Options(concurrency=concurrency, token=token or None, kubeconfig=kubeconfig)

    def report(results) -> None:  # noqa: ANN001
        busy = [r for r in results if r.outcome != "in-sync"]
        sys.stdout.write(json.dumps({"clusters": len(results), "worked_on": to_data(busy)}) + "\n")
        sys.stdout.flush()

    loop(lambda: open_workspace(s.repo, registry=s.registry, control_branch=s.control_branch),
         options, interval=pause, report=report)


def _registry_commands() -> None:
    from clmgit.registry.commands import registry_app

    app.add_typer(registry_app, name="registry")


_registry_commands()


def main() -> None:
    """Entry point: run the app and map errors to exit codes in this one place."""
    verbose = "--verbose" in sys.argv or "-v" in sys.argv
    try:
        app(standalone_mode=True)
    except ClmgitError as e:
        if verbose:
            traceback.print_exc()
        sys.stderr.write(f"error: {e}\n")
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - the last line of defence, exit code 3
        if verbose:
            traceback.print_exc()
        sys.stderr.write(
            f"internal error: {type(e).__name__}: {e} (run with --verbose for a traceback)\n"
        )
        sys.exit(3)
    finally:
        sys.stdout.flush()
