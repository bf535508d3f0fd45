"""`clmgit health`: look at clusters' health now, record the verdicts, show them. Option parsing
and output only; the work is in `clmgit.reconcile.health`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from clmgit.cli.common import Format, OutputOpt, settings
from clmgit.cli.reconcile import Kubeconfig, Token, TokenFile, bearer_token

if TYPE_CHECKING:
    from clmgit.reconcile.health import HealthRow

HELP = """Observe the health of clusters now and record the verdict in the registry.

A cluster is healthy only if its record shows no update under way and no problem; every
CloudFormation stack of it is *_COMPLETE and not a rollback; its nodes are Ready, not outdated
and not cordoned (except by clmgit's rolling update); the Deployments, StatefulSets and
DaemonSets in the namespaces its manifests touch are rolled out as `kubectl rollout status`
judges, with no pod in CrashLoopBackOff or ImagePullBackOff; and the optional checks of
`gates.healthy_in_source.checks` pass (http, prometheus, job).

States: healthy; pending (applied, not judged yet or still converging, within its deadline);
unhealthy (a check failed, within its deadline); failed (not healthy by the progress deadline
after its apply); unknown (unreachable, no data: never healthy).

The verdict is recorded as status.health {state, version, observed_at, healthy_since, reasons}
and is bound to the version the cluster runs; `healthy_since` restarts whenever the cluster was
seen unhealthy. `promote` reads these verdicts for the healthy_in_source gate. A file registry
that the checked-out control branch tracks is committed afterwards, as reconcile does (`--push`
pushes that commit).

Exit code 4 when any cluster is unhealthy or failed (its verdict is shown and recorded first),
0 when every cluster is healthy, pending or unknown."""


def health(
    ctx: typer.Context,
    channel: Annotated[str | None, typer.Option(help="Only clusters of this channel.")] = None,
    cluster: Annotated[list[str], typer.Option(
        "--cluster", "-c", help="Only this cluster (id or alias; repeatable).")
    ] = [],  # noqa: B006 - typer reads the default, never mutates it
    no_record: Annotated[bool, typer.Option(
        "--no-record", help="Show the verdicts; write nothing to the registry.")] = False,
    push: Annotated[bool, typer.Option(
        "--push", help="Push the commit that records a file registry's state to origin.")
                    ] = False,
    token: Token = None,
    token_file: TokenFile = None,
    kubeconfig: Kubeconfig = None,
    out: OutputOpt = Format.table,
) -> None:
    from clmgit.cli import views
    from clmgit.cli.reconcile import _check_push, _record  # one way to commit the file's state
    from clmgit.reconcile.backends import AwsBackends
    from clmgit.reconcile.health import Observer, observe_fleet, select_running, workspace_gates
    from clmgit.reconcile.preflight import check_access

    ws = settings(ctx).ws
    if push:
        _check_push(ws)
    clusters = select_running(ws, channel=channel, names=cluster)
    from clmgit.access import Access
    from clmgit.reconcile.session import workspace_roles

    access = Access(token=bearer_token(token, token_file), kubeconfig=kubeconfig,
                    roles=workspace_roles(ws))
    if clusters:
        check_access(access, clusters)
    observer = Observer(AwsBackends(access, layout=ws.layout).health,
                        workspace_gates(ws), layout=ws.layout)
    rows = observe_fleet(ws, observer, clusters, record=not no_record)
    unrecorded = None if no_record else _record(ws, push=push)
    views.health_rows(rows, fmt=out)
    _exit_for(rows, unrecorded)


def _exit_for(rows: Sequence[HealthRow], unrecorded: Exception | None) -> None:
    """Exit 4 when a cluster is unhealthy or failed: a CI job or a script that looks at health
    must not read "0" as "the fleet is fine"."""
    from clmgit.errors import ClustersFailed
    from clmgit.healthstate import FAILED, UNHEALTHY

    bad = [r for r in rows if r.state in (UNHEALTHY, FAILED)]
    if bad:
        names = ", ".join(f"{r.alias or r.id} ({r.state})" for r in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise ClustersFailed(f"{len(bad)} cluster(s) not healthy: {names}{more}")
    if unrecorded is not None:
        raise unrecorded


health.__doc__ = HELP

COMMANDS: dict[str, Callable[..., None]] = {"health": health}
