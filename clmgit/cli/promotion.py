"""`promote`, `rollback`, `diff`, `render`, `status`, `history`, `freeze`, `unfreeze`,
`sync-branches`: the commands that read and move pins. Option parsing and output only."""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from clmgit import events
from clmgit.cli import output
from clmgit.cli.common import (
    DryRun,
    Format,
    Groups,
    OutputOpt,
    Push,
    Sign,
    retry_hint,
    settings,
    writing_workspace,
)
from clmgit.model import short_version

if TYPE_CHECKING:
    from clmgit.promotion.promote import Plan
    from clmgit.workspace import Workspace

PrOpt = Annotated[bool, typer.Option("--pr", help="Open a pull request instead (GITHUB_TOKEN).")]


def promote(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="The channel promoted from.")],
    target: Annotated[str, typer.Argument(help="The channel whose groups are pinned.")],
    group: Groups = [],  # noqa: B006 - typer reads the default, never mutates it
    sha: Annotated[list[str], typer.Option(
        metavar="SHA", help="Promote this SHA of the source; with several config sources "
        "SOURCE=SHA (repeatable). With SOURCE the same as TARGET: a hotfix, a commit of "
        "TARGET's own branch (sources not named stay).")] = [],  # noqa: B006 - never mutated
    dry_run: DryRun = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Override forward-only, the branch-content check and gates, the "
        "promotion windows among them (recorded: Clmgit-Override).")] = False,
    ignore_freeze: Annotated[bool, typer.Option("--ignore-freeze",
                                                help="Promote into a frozen channel.")] = False,
    from_any: Annotated[bool, typer.Option(
        "--from-any", help="Promote from a channel other than TARGET's source: (recorded).")
                        ] = False,
    push: Push = False,
    pr: PrOpt = False,
    sign: Sign = False,
    out: OutputOpt = Format.table,
) -> None:
    """Pin the groups of TARGET to the commit SOURCE has.

    The gates of channels/TARGET.yaml must pass: frozen, applied_in_source, soak,
    groups_before (applied or healthy), and healthy_in_source {stable_for, progress_deadline,
    allow_unknown, checks, namespaces}: every running SOURCE cluster runs the SHA and has been
    observed healthy on it (by reconcile or `clmgit health`), after its apply, without a break
    for stable_for. Health states: healthy, pending, unhealthy, failed (not healthy by
    progress_deadline after its apply), unknown (unreachable; up to allow_unknown pass). The
    verdicts are written into the commit (Clmgit-Health); --force overrides, recorded.

    windows {timezone, allow, deny} of TARGET: outside them the promotion is refused, naming
    when the next one opens. signed_source (true, or all: every commit it brings): the commit
    must be signed by a key in the allowed signers of the control branch (clmgit.yaml
    signing.allowed_signers), as git verifies it.

    Hotfix: `promote beta beta --sha FIX` pins beta's groups to FIX, a commit of branch beta
    that contains their pins. applied_in_source, soak and healthy_in_source judge a change
    where it ran before; a hotfix ran nowhere, so they do not apply, while freeze, windows,
    signed_source, forward-only and groups_before do. It is recorded as `hotfix(beta): ...`
    with Clmgit-Action: hotfix; `sync-branches` then merges it into the branch of the first
    channel of the pipeline, from where it is promoted as usual.

    CLMGIT_NOW (ISO 8601 with an offset) sets the time the command starts at, for every
    decision about time."""
    from clmgit.promotion.promote import plan_promotion

    ws = writing_workspace(ctx, push=push, pr=pr, sign=sign)
    plan = plan_promotion(ws, source=source, target=target, groups=group, sha=sha, force=force,
                          ignore_freeze=ignore_freeze, from_any=from_any)
    with retry_hint():
        _finish_plan(ws, plan, dry_run=dry_run, push=push, pr=pr, out=out)


def rollback(
    ctx: typer.Context,
    channel: Annotated[str, typer.Argument(help="The channel to roll back.")],
    group: Groups = [],  # noqa: B006
    to: Annotated[list[str], typer.Option(
        metavar="SHA", help="Roll back to this SHA; with several config sources SOURCE=SHA "
        "(repeatable; sources not named stay).")] = [],  # noqa: B006 - typer never mutates it
    dry_run: DryRun = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Move the branch even if it carries content the pin lacks; roll "
        "back outside the channel's windows (recorded).")] = False,
    push: Push = False,
    pr: PrOpt = False,
    sign: Sign = False,
    out: OutputOpt = Format.table,
) -> None:
    """Pin the groups of CHANNEL back to their previous pin (or --to SHA); only inside the
    channel's windows, as a promotion."""
    from clmgit.promotion.promote import plan_rollback

    ws = writing_workspace(ctx, push=push, pr=pr, sign=sign)
    plan = plan_rollback(ws, channel=channel, groups=group, to=to, force=force)
    with retry_hint():
        _finish_plan(ws, plan, dry_run=dry_run, push=push, pr=pr, out=out)


def _finish_plan(ws: Workspace, plan: Plan, *, dry_run: bool, push: bool, pr: bool,
                 out: Format) -> None:
    from clmgit.cli import views
    from clmgit.cli.results import NothingToDo, PlanOutcome, PullRequestOutcome
    from clmgit.promotion.promote import check, land_plan

    if plan.refusals:
        if dry_run or out is not Format.table:  # the plan first, then why it is refused
            views.plan(PlanOutcome.of(plan, None), fmt=out)
        if not dry_run:
            _tell(events.PROMOTION_REFUSED, plan, "refused: " + "; ".join(plan.refusals))
        check(plan)
    if plan.nothing_to_do:
        if push and not dry_run:
            from clmgit.promotion.write import catch_up

            catch_up(ws)
        views.nothing_to_do(NothingToDo.of(plan), fmt=out)
        return
    if pr:
        from clmgit.promotion.pr import open_pull_request

        opened = open_pull_request(ws, plan, dry_run=dry_run)
        views.pull_request(PullRequestOutcome.of(plan, opened), fmt=out)
        return
    landed = None if dry_run else land_plan(ws, plan, push=push)
    if landed is not None:
        _tell(events.PROMOTION_LANDED, plan, f"landed as {(landed.commit or '')[:7]}"
              + ("" if landed.pushed else " (not pushed)"))
        if plan.overrides:
            _tell(events.PROMOTION_FORCED, plan, "overrode: " + "; ".join(plan.overrides))
        from clmgit.promotion.gates import window_overrides

        bypassed = window_overrides(plan.overrides)
        if bypassed:
            _tell(events.WINDOW_BYPASSED, plan, "overrode: " + "; ".join(bypassed))
    views.plan(PlanOutcome.of(plan, landed), fmt=out)


def _tell(name: str, plan: Any, what: str) -> None:
    """A promotion's (or rollback's) event, for notifications (clmgit.notify)."""
    groups = ", ".join(c.group for c in plan.changes) or "no group"
    verb = "promotion" if plan.action == "promote" else plan.action
    events.emit(name, f"{verb} of {short_version(plan.sha)} to {plan.target} ({groups}) {what}",
                channel=plan.target, sha=plan.sha, action=plan.action)


def diff(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="The channel promoted from.")],
    target: Annotated[str, typer.Argument(help="The channel promoted into.")],
    group: Groups = [],  # noqa: B006
    cluster: Annotated[
        str | None, typer.Option(help="Only the group of this cluster, rendered for it.")
    ] = None,
    sha: Annotated[list[str], typer.Option(
        metavar="SHA", help="Preview this SHA of the source; with several config sources "
        "SOURCE=SHA (repeatable).")] = [],  # noqa: B006 - typer reads it, never mutates it
    out: OutputOpt = Format.table,
) -> None:
    """Preview what `promote SOURCE TARGET` would bring, per group: the commits to cluster/ and
    the diff of one cluster's rendered stacks and manifests (secret-looking values masked)."""
    from clmgit.cli import views
    from clmgit.promotion.preview import preview

    previews = preview(settings(ctx).ws, source=source, target=target, groups=group,
                       cluster=cluster, sha=sha)
    views.previews(previews, fmt=out)


def render(
    ctx: typer.Context,
    cluster: Annotated[str, typer.Option(help="Cluster id or alias.")],
    channel: Annotated[str | None, typer.Option(help="Render at this channel's pin.")] = None,
    sha: Annotated[str | None, typer.Option(help="Render at this commit.")] = None,
    out_dir: Annotated[str | None, typer.Option("--out", help="Write files here.")] = None,
) -> None:
    """Render every stack, node-pool stack, manifest and deletion list of one cluster."""
    from clmgit.config.composed import workspace_source
    from clmgit.config.offline import preview_account
    from clmgit.config.output import render_text, render_to_files
    from clmgit.config.render import render_cluster
    from clmgit.promotion.render_at import resolve_render

    ws = settings(ctx).ws
    record, at = resolve_render(ws, cluster=cluster, channel=channel, sha=sha)
    source = workspace_source(ws.sources, ws.source_repos.repo, follow_symlinks=ws.layout.clm)
    account = preview_account(record, ws.layout)
    rendered = render_cluster(source, at, record, layout=ws.layout, account=account)
    if account is not None:
        output.note("rendered without AWS: the VPC, subnets, AMI ids, instance types and KMS keys "
                    "are made up from the record (reconcile --dry-run asks the account)")
    if out_dir:
        paths = render_to_files(rendered, out_dir)
        output.line(f"rendered {record.id} at {at[:7]}: {len(paths)} files in {out_dir}")
    else:
        sys.stdout.write(render_text(rendered))


class By(StrEnum):
    cluster = "cluster"
    group = "group"


def status(
    ctx: typer.Context,
    channel: Annotated[str | None, typer.Option(help="Only clusters of this channel.")] = None,
    group: Annotated[str | None, typer.Option(help="Only clusters of this group.")] = None,
    state: Annotated[list[str], typer.Option(
        "--state", metavar="STATE",
        help="Only clusters in this state (repeatable): in-sync, pending, updating, stuck, "
             "failed, blocked, decommission.")] = [],  # noqa: B006 - typer reads it, never mutates it
    health: Annotated[list[str], typer.Option(
        "--health", metavar="STATE",
        help="Only clusters whose recorded health is this (repeatable): healthy, pending, "
             "unhealthy, failed, unknown (see `clmgit health`).")] = [],  # noqa: B006
    label: Annotated[list[str], typer.Option(
        "--selector", "-l", metavar="KEY=GLOB",
        help="Only clusters whose field matches (repeatable), as a group selector: "
             "environment=production, config_items.team=a*.")] = [],  # noqa: B006
    sort_by: Annotated[str | None, typer.Option(
        "--sort-by", metavar="COLUMN", help="Sort by this column (default: registry order).")
                       ] = None,
    by: Annotated[By, typer.Option(
        "--by", help="cluster: a row per cluster; group: a row per channel group with its "
                     "pin, states, freeze and gate.")] = By.cluster,
    out: OutputOpt = Format.table,
) -> None:
    """Pinned versus applied version, per cluster (or per group with --by group)."""
    from clmgit.cli import views
    from clmgit.promotion.status import Filter, fleet_status, group_rollup, sort_states

    ws = settings(ctx).ws
    where = Filter(channel=channel, group=group, states=frozenset(state),
                   health=frozenset(health), labels=_selector(label))
    states = fleet_status(ws, where=where)
    if by is By.group:
        views.group_rows([r for r in group_rollup(ws, states)
                          if (channel is None or r.channel == channel)
                          and (group is None or r.group == group)], fmt=out)
        return
    if sort_by:
        states = sort_states(states, sort_by)
    frozen = [(ch.name, ch.freeze_reason) for ch in ws.channels.values()
              if ch.frozen and (channel is None or ch.name == channel)]
    views.states(states, frozen=frozen, fmt=out)


def _selector(pairs: list[str]) -> dict[str, str]:
    from clmgit.errors import ConfigError

    selector = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise ConfigError(f"-l {pair!r}: expected KEY=GLOB, such as environment=production")
        selector[key] = value
    return selector


def history(
    ctx: typer.Context,
    channel: Annotated[str | None, typer.Argument(help="Only this channel.")] = None,
    channel_opt: Annotated[str | None, typer.Option(
        "--channel", help="Only this channel (the same as the argument).")] = None,
    group: Annotated[str | None, typer.Option(help="Only changes that moved this group.")
                     ] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many entries.")] = 50,
    out: OutputOpt = Format.table,
) -> None:
    """Promotions, rollbacks and freezes, newest first; overrides marked with !."""
    from clmgit.cli import views
    from clmgit.errors import ConfigError
    from clmgit.promotion.history import history as read_history

    if channel and channel_opt and channel != channel_opt:
        raise ConfigError(f"two channels given: {channel!r} and --channel {channel_opt!r}")
    entries = read_history(settings(ctx).ws, channel or channel_opt, group=group, limit=limit)
    views.history(entries, fmt=out)


def freeze(
    ctx: typer.Context,
    channel: Annotated[str, typer.Argument(help="The channel to freeze.")],
    reason: Annotated[str, typer.Option(help="Why; shown to whoever is refused.")],
    push: Push = False,
    dry_run: DryRun = False,
    sign: Sign = False,
    out: OutputOpt = Format.table,
) -> None:
    """Refuse promotions into CHANNEL until it is unfrozen."""
    _set_frozen(ctx, channel, frozen=True, reason=reason, push=push, dry_run=dry_run, out=out,
                sign=sign)


def unfreeze(
    ctx: typer.Context,
    channel: Annotated[str, typer.Argument(help="The channel to unfreeze.")],
    push: Push = False,
    dry_run: DryRun = False,
    sign: Sign = False,
    out: OutputOpt = Format.table,
) -> None:
    """Allow promotions into CHANNEL again."""
    _set_frozen(ctx, channel, frozen=False, reason="", push=push, dry_run=dry_run, out=out,
                sign=sign)


def _set_frozen(ctx: typer.Context, channel: str, *, frozen: bool, reason: str,
                push: bool, dry_run: bool, out: Format, sign: bool) -> None:
    from clmgit.cli import views
    from clmgit.promotion.freeze import set_frozen

    ws = writing_workspace(ctx, push=push, sign=sign)
    with retry_hint():
        result = set_frozen(ws, channel, frozen=frozen, reason=reason, push=push,
                            dry_run=dry_run)
    views.freeze(result, fmt=out)


def sync_branches(
    ctx: typer.Context,
    push: Push = False,
    dry_run: DryRun = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Move branches even if they carry content their pin lacks.")] = False,
    out: OutputOpt = Format.table,
) -> None:
    """Bring each channel branch to the content all of its groups are pinned to, by
    fast-forward or promotion merge; and merge each hotfix (a group pinned by `promote X X
    --sha FIX`) into the branch of the first channel of its pipeline, from where it is
    promoted as usual (recorded in history; a merge that conflicts is refused)."""
    from clmgit.cli import views
    from clmgit.cli.results import SourcedMove
    from clmgit.promotion.sync import sync_branches as sync

    ws = writing_workspace(ctx, push=push)
    with retry_hint():
        several = len(ws.versions.names) > 1
        moved = [SourcedMove.of((m.source or None) if several else None, m.move)
                 for m in sync(ws, push=push, dry_run=dry_run, force=force)]
    views.branch_moves(moved, dry_run=dry_run, fmt=out)


COMMANDS: dict[str, Callable[..., None]] = {
    "promote": promote, "rollback": rollback, "diff": diff, "render": render, "status": status,
    "history": history, "freeze": freeze, "unfreeze": unfreeze, "sync-branches": sync_branches,
}
