"""`reconcile`, `provision`, `decommission`, `controller`: the commands that change clusters.
Option parsing, progress and result output only; the work is in `clmgit.reconcile`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from clmgit.access import AUTO
from clmgit.cli.common import Format, OutputOpt, settings

if TYPE_CHECKING:
    from clmgit.reconcile.session import Options
    from clmgit.workspace import Workspace

DryRun = Annotated[bool, typer.Option("--dry-run", help="Render, show change sets and planned "
                                      "node rolls; change nothing, write nothing.")]
Token = Annotated[str | None, typer.Option(
    envvar="CLMGIT_TOKEN", show_envvar=True,
    help="Bearer token for the clusters' API servers (visible in ps: prefer --token-file).")]
TokenFile = Annotated[str | None, typer.Option(
    envvar="CLMGIT_TOKEN_FILE", show_envvar=True,
    help="A file holding the bearer token ('-': read it from stdin).")]
Kubeconfig = Annotated[str | None, typer.Option(
    envvar="CLMGIT_KUBECONFIG", show_envvar=True,
    help="A kubeconfig with a context per cluster, named after its id or alias.")]


class KubeAuthMode(StrEnum):
    """The choices of --kube-auth (`clmgit.access.KUBE_AUTH_MODES`)."""

    auto = "auto"
    kubeconfig = "kubeconfig"
    eks = "eks"
    token = "token"


KubeAuth = Annotated[KubeAuthMode, typer.Option(
    envvar="CLMGIT_KUBE_AUTH", show_envvar=True,
    help="How to reach each cluster's API server: kubeconfig (its context named after the "
         "cluster), token (one bearer token for all), eks (a token from STS in the cluster's "
         "account, for zalando-eks clusters; no kubeconfig needed) or auto (kubeconfig if "
         "given, else token if given, else eks for zalando-eks clusters).")]
Concurrency = Annotated[int, typer.Option(min=1, help="Clusters worked on at once.")]
Processes = Annotated[int | None, typer.Option(
    min=1, help="Worker processes for rendering and dry runs [default: the usable cores].")]
ClusterOpt = Annotated[str, typer.Option("--cluster", "-c", help="The cluster (id or alias).")]
Push = Annotated[bool, typer.Option(
    "--push", help="Push the commit that records a file registry's state to origin.")]

Work = Callable[["Workspace", "Options"], Sequence[Any]]


def _run(ctx: typer.Context, work: Work, *, out: Format, title: str, dry_run: bool = False,
         concurrency: int = 1, processes: int | None = None, token: str | None = None,
         kubeconfig: str | None = None, kube_auth: str = AUTO, push: bool = False,
         wait_for_leases: float = 0.0, summary: bool = False) -> None:
    """Run `work(workspace, options)` with a progress display, then show its results."""
    from clmgit.cli import views
    from clmgit.cli.interrupt import stoppable
    from clmgit.machine import usable_cores
    from clmgit.reconcile.session import Options

    progress = views.Progress(enabled=out is Format.table and not summary)
    with stoppable(progress.interrupted) as stop:
        options = Options(dry_run=dry_run, concurrency=concurrency,
                          processes=processes or usable_cores(), token=token or None,
                          kubeconfig=kubeconfig, kube_auth=kube_auth, on_plan=progress.plan,
                          on_start=progress.start,
                          on_result=progress.result, on_event=progress.event, stop=stop,
                          lease_seconds=lease_seconds(), wait_for_leases=wait_for_leases)
        ws = settings(ctx).ws
        if push and not dry_run:
            _check_push(ws)
        try:
            results = work(ws, options)
        finally:
            progress.stop()
    unrecorded = None if dry_run else _record(ws, push=push)
    if stop.is_set():
        _stopped(results, out=out, unrecorded=unrecorded)
    _show_results(results, out=out, title=title, unrecorded=unrecorded, summary=summary)


def _record(ws: Workspace, *, push: bool) -> Exception | None:
    """Commit what the run wrote into a file registry tracked on the control branch (see
    clmgit.reconcile.record.py); the error when that failed, for after the results."""
    from clmgit.cli import output
    from clmgit.errors import ClmgitError
    from clmgit.reconcile.record import record_state

    try:
        recorded = record_state(ws, push=push)
    except ClmgitError as e:
        return type(e)(f"the registry's state is not committed: {e}")
    if recorded is None:
        return None
    if recorded.note:
        output.note(f"note: {recorded.note}")
    elif recorded.commit:
        where = " and pushed" if recorded.pushed else " (push it: --push)"
        output.note(f"recorded the state in {recorded.path}: {recorded.commit[:7]} on "
                    f"{ws.control_branch}{where}")
    return None


def _check_push(ws: Workspace) -> None:
    """--push before any work: it needs a file registry that the control branch tracks."""
    from clmgit.errors import RefusedError
    from clmgit.reconcile.record import tracked_registry

    if tracked_registry(ws) is None:
        raise RefusedError(
            f"--push pushes the state a file registry records, and {ws.registry.location} is "
            f"not a file tracked on the checked-out {ws.control_branch!r} of {ws.location}; "
            "an HTTP registry keeps its own state")


def _stopped(results: Sequence[Any], *, out: Format, unrecorded: Exception | None) -> None:
    """An interrupted run: its results so far, what it stopped, and exit 130."""
    from clmgit.cli import views
    from clmgit.errors import Interrupted
    from clmgit.reconcile.run import NOT_STARTED

    views.reconcile_results(results, fmt=out, also=_errors(unrecorded))
    stopped = [r for r in results if r.outcome == "stopped"]
    unstarted = [r for r in results if r.outcome == "skipped" and r.detail == NOT_STARTED]
    said = [f"stopped {_names(stopped)}" if stopped else "",
            f"did not start {_names(unstarted)}" if unstarted else ""]
    if not stopped and not unstarted:
        raise Interrupted("interrupted: every cluster had finished; nothing is left to resume")
    raise Interrupted(f"interrupted: {'; '.join(s for s in said if s)}; leases given up, "
                      "the next run resumes them")


def _errors(unrecorded: Exception | None) -> list[dict[str, Any]]:
    from clmgit.errors import ClmgitError

    if unrecorded is None:
        return []
    code = unrecorded.exit_code if isinstance(unrecorded, ClmgitError) else 1
    return [{"message": str(unrecorded), "exit_code": code}]


def _show_results(results: Sequence[Any], *, out: Format, title: str,
                  unrecorded: Exception | None = None, summary: bool = False) -> None:
    from clmgit.cli import views
    from clmgit.errors import ClustersBlocked, ClustersFailed, ClustersSkipped

    views.reconcile_results(results, fmt=out, also=[*_blocked_errors(results),
                                                     *_errors(unrecorded)], summary=summary)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        views.step_summary(results, step_summary, title=title)
    failed = [r for r in results if r.failed]
    if failed:
        raise ClustersFailed(f"{len(failed)} cluster(s) failed: {_names(failed)}")
    if unrecorded is not None:
        raise unrecorded
    held = [r for r in results if r.lease_held]
    if held:
        raise ClustersSkipped(
            f"{len(held)} cluster(s) not reconciled, other reconcilers hold their leases: "
            f"{_names(held)}; run again later, or wait with --wait-for-leases")
    blocked = [r for r in results if r.blocked]
    if blocked:
        raise ClustersBlocked(f"{len(blocked)} cluster(s) blocked, not reconciled: "
                              f"{_reasons(blocked)}")


def _blocked_errors(results: Sequence[Any]) -> list[dict[str, Any]]:
    """The envelope's `errors` for blocked clusters (failed and held ones are the view's)."""
    from clmgit.errors import ClustersBlocked

    return [{"cluster": r.id, "message": r.detail, "exit_code": ClustersBlocked.exit_code}
            for r in results if r.blocked]


def _reasons(results: Sequence[Any]) -> str:
    named = "; ".join(f"{r.alias or r.id} ({r.detail})" for r in results[:5])
    return named + (f"; and {len(results) - 5} more" if len(results) > 5 else "")


def _names(results: Sequence[Any]) -> str:
    names = ", ".join(r.alias or r.id for r in results[:5])
    return names + (f" and {len(results) - 5} more" if len(results) > 5 else "")


def lease_seconds() -> float:
    """`CLMGIT_LEASE_SECONDS`: how long a lease lasts unless renewed (default 900)."""
    from clmgit.errors import ConfigError
    from clmgit.registry import DEFAULT_LEASE_SECONDS

    value = os.environ.get("CLMGIT_LEASE_SECONDS", "")
    if not value:
        return DEFAULT_LEASE_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 1 <= seconds <= 86400:
        raise ConfigError(f"CLMGIT_LEASE_SECONDS={value!r} must be a number of seconds from 1 "
                          "to 86400")
    return seconds


def reconcile(
    ctx: typer.Context,
    cluster: Annotated[list[str], typer.Option("--cluster", "-c",
                                               help="Only this cluster (id or alias; repeatable).")
                       ] = [],  # noqa: B006 - typer reads the default, never mutates it
    channel: Annotated[str | None, typer.Option(help="Only clusters of this channel.")] = None,
    shard: Annotated[str | None, typer.Option(
        help="Only shard I of N (0-based), by a stable hash of the cluster id.")] = None,
    concurrency: Concurrency = 4,
    processes: Processes = None,
    dry_run: DryRun = False,
    token: Token = None,
    token_file: TokenFile = None,
    kubeconfig: Kubeconfig = None,
    kube_auth: KubeAuth = KubeAuthMode.auto,
    push: Push = False,
    wait_for_leases: Annotated[str, typer.Option(
        help="Wait this long (such as 10m) for clusters whose leases other reconcilers hold, "
             "instead of skipping them (a run that skips any exits 5).")] = "0s",
    ignore_window: Annotated[bool, typer.Option(
        "--ignore-window", help="Start updates outside clusters' maintenance windows (said in "
        "the results and recorded in the registry's problems).")] = False,
    require_signed_pins: Annotated[bool, typer.Option(
        "--require-signed-pins", help="Apply a channel's pin only if the commit that moved it "
        "is signed by a key in the allowed signers (as clmgit.yaml "
        "signing.require_signed_pins).")] = False,
    summary: Annotated[bool, typer.Option(
        "--summary", "-q", help="Print the clusters that failed or were skipped and the "
        "counts, not every cluster's changes (and no progress display).")] = False,
    out: OutputOpt = Format.table,
) -> None:
    """Bring every selected cluster to the version its channel pins; record it in the registry.

    An update starts only inside the cluster's maintenance window (config item
    maintenance_window such as "Sat-Sun 02:00-05:00 Europe/Berlin", else its group's in the
    channel file); outside it the cluster is waiting, with the next opening (exit 0). An
    update under way pauses between waves when the window closes; the next run resumes it.
    CLMGIT_NOW (ISO 8601 with an offset) sets the time the command starts at."""
    from dataclasses import replace

    from clmgit.durations import parse_duration
    from clmgit.reconcile.session import reconcile as run

    wait = parse_duration(wait_for_leases, where="--wait-for-leases").total_seconds()

    shard_spec = _shard(shard) if shard else None
    title = "clmgit reconcile" + (f" (shard {shard})" if shard else "") + (
        " (dry run)" if dry_run else "")
    _run(ctx, lambda ws, options: run(
        ws, replace(options, ignore_window=ignore_window, require_signed_pins=require_signed_pins),
        names=cluster, channel=channel, shard=shard_spec),
         out=out, title=title, dry_run=dry_run, concurrency=concurrency, processes=processes,
         token=bearer_token(token, token_file), kubeconfig=kubeconfig,
         kube_auth=kube_auth.value, push=push,
         wait_for_leases=wait, summary=summary)


def bearer_token(token: str | None, token_file: str | None) -> str | None:
    """The token given as such or read from `token_file` ('-': stdin), surrounding whitespace
    removed; a file keeps it out of the process list, where `--token` shows it."""
    from pathlib import Path

    from clmgit.errors import ConfigError

    if token_file is None:
        return token or None
    if token:
        raise ConfigError("give the token once: --token (CLMGIT_TOKEN) or --token-file "
                          "(CLMGIT_TOKEN_FILE), not both")
    where = "stdin" if token_file == "-" else f"the token file {token_file}"
    try:
        text = sys.stdin.read() if token_file == "-" else Path(token_file).read_text()
    except OSError as e:
        raise ConfigError(f"cannot read {where}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where} is not UTF-8 text; it must hold the token alone") from None
    if not text.strip():
        raise ConfigError(f"{where} is empty; it must hold the bearer token")
    return text.strip()


def _shard(spec: str) -> tuple[int, int]:
    """A bad --shard is a usage error (exit 2), like --concurrency 0."""
    from clmgit.errors import ConfigError
    from clmgit.reconcile.plan import parse_shard

    try:
        return parse_shard(spec)
    except ConfigError as e:
        raise typer.BadParameter(str(e).removeprefix(f"--shard {spec!r}: "),
                                 param_hint="'--shard'") from None


def provision(
    ctx: typer.Context,
    cluster: ClusterOpt,
    directory: Annotated[str, typer.Option(help="A working tree with a cluster/ directory.")],
    dry_run: DryRun = False,
    token: Token = None,
    token_file: TokenFile = None,
    kubeconfig: Kubeconfig = None,
    kube_auth: KubeAuth = KubeAuthMode.auto,
    push: Push = False,
    out: OutputOpt = Format.table,
) -> None:
    """Apply a working tree to one cluster directly, without git (CLM's provisioning mode)."""
    from pathlib import Path

    from clmgit.reconcile.session import provision as run

    _run(ctx, lambda ws, options: [run(ws, options, name=cluster, directory=Path(directory))],
         out=out, title="clmgit provision", dry_run=dry_run,
         token=bearer_token(token, token_file), kubeconfig=kubeconfig,
         kube_auth=kube_auth.value, push=push)


def decommission(
    ctx: typer.Context,
    cluster: ClusterOpt,
    yes: Annotated[bool, typer.Option(
        "--yes", help="Decommission even if the registry does not say decommission-requested.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be scaled down and "
                                          "deleted; change nothing.")] = False,
    token: Token = None,
    token_file: TokenFile = None,
    kubeconfig: Kubeconfig = None,
    kube_auth: KubeAuth = KubeAuthMode.auto,
    push: Push = False,
    out: OutputOpt = Format.table,
) -> None:
    """Delete every stack of a cluster (the main stack last) and mark it decommissioned; only a
    cluster whose lifecycle_status is decommission-requested, unless --yes."""
    from clmgit.reconcile.session import decommission as run

    _run(ctx, lambda ws, options: [run(ws, options, name=cluster, confirmed=yes)],
         out=out, title="clmgit decommission", dry_run=dry_run,
         token=bearer_token(token, token_file), kubeconfig=kubeconfig,
         kube_auth=kube_auth.value, push=push)


def controller(
    ctx: typer.Context,
    interval: Annotated[str, typer.Option(help="Pause between rounds, such as 10m or 90s.")
                        ] = "10m",
    concurrency: Concurrency = 4,
    processes: Processes = None,
    token: Token = None,
    token_file: TokenFile = None,
    kubeconfig: Kubeconfig = None,
    kube_auth: KubeAuth = KubeAuthMode.auto,
    push: Push = False,
    metrics_port: Annotated[int | None, typer.Option(
        min=0, max=65535, envvar="CLMGIT_METRICS_PORT", show_envvar=True,
        help="Serve /healthz (503 when a round runs past twice the interval), /readyz (503 "
             "until a round reached the registry and the config repo, and after one that did "
             "not) and /metrics (Prometheus) on this port.")] = None,
    metrics_address: Annotated[str, typer.Option(
        envvar="CLMGIT_METRICS_ADDRESS", show_envvar=True,
        help="The address --metrics-port listens on (0.0.0.0: every interface, as in a pod).")
    ] = "127.0.0.1",
) -> None:
    """Fetch, reconcile, sleep; until SIGTERM. Each round's results go to stdout as JSON lines;
    --metrics-port serves health, readiness and Prometheus metrics."""
    import json
    from collections import Counter

    from clmgit import events
    from clmgit.cli import output
    from clmgit.cli.output import API_VERSION, to_data
    from clmgit.durations import parse_duration
    from clmgit.machine import usable_cores
    from clmgit.reconcile.session import Options
    from clmgit.reconcile.session import controller as loop
    from clmgit.service import RoundWatch

    pause = parse_duration(interval, where="--interval").total_seconds()
    watch = RoundWatch(interval=pause)
    options = Options(concurrency=concurrency, processes=processes or usable_cores(),
                      token=bearer_token(token, token_file), kubeconfig=kubeconfig,
                      kube_auth=kube_auth.value, lease_seconds=lease_seconds())

    rounds: list[Workspace] = []

    def open_round() -> Workspace:
        watch.started()
        rounds[:] = [settings(ctx).reopen()]
        return rounds[0]

    if push:
        _check_push(settings(ctx).ws)

    states: list[tuple[str, str]] = []

    def report(results: Sequence[Any]) -> None:
        channels = {c.id: c.channel for c in rounds[0].clusters}
        states[:] = [(r.outcome, channels.get(r.id, "")) for r in results]
        busy = [r for r in results if r.outcome != "in-sync"]
        unrecorded = _record(rounds[0], push=push)
        sys.stdout.write(json.dumps({
            "apiVersion": API_VERSION, "kind": "ControllerRound", "items": to_data(busy),
            "summary": {"clusters": len(results), **Counter(r.outcome for r in results)},
            "errors": [*({"cluster": r.id, "message": r.detail, "exit_code": 4}
                         for r in busy if r.failed), *_blocked_errors(busy),
                       *_errors(unrecorded)]}) + "\n")
        sys.stdout.flush()

    def round_done(error: Exception | None) -> None:
        watch.finished(error, None if error else states)

    served = None if metrics_port is None else watch.serve(address=metrics_address,
                                                           port=metrics_port)
    if served is not None:
        output.note(f"serving /healthz, /readyz and /metrics on {metrics_address}:{served.port}")
    try:
        with events.listening(watch.metrics.hear):
            loop(open_round, options, interval=pause, report=report, round_done=round_done)
    finally:
        if served is not None:
            served.stop()


COMMANDS: dict[str, Callable[..., None]] = {
    "reconcile": reconcile, "provision": provision, "decommission": decommission,
    "controller": controller,
}
