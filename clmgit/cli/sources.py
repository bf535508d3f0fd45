"""`clmgit sources ...`: the config sources of `clmgit.yaml`. Option parsing and output only;
the work is in clmgit/promotion/addsource.py. Mounted by `clmgit.cli.main` as `sources`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from clmgit.cli import output
from clmgit.cli.common import (
    DryRun,
    Format,
    OutputOpt,
    Push,
    Sign,
    retry_hint,
    writing_workspace,
)
from clmgit.cli.helpstyle import CONTEXT_SETTINGS, Command, Group
from clmgit.errors import ConfigError

if TYPE_CHECKING:
    from clmgit.promotion.addsource import SourceAdded

sources_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, cls=Group, context_settings=CONTEXT_SETTINGS,
    help="The config sources of clmgit.yaml (CLM's --config-source).",
)


@sources_app.command(cls=Command)
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The new source's name, [a-z0-9-]+.")],
    repo: Annotated[str, typer.Option(
        "--repo", help="Its repository: a git URL (https, ssh, git, file) or a path outside "
        "this repository's working tree.")],
    branch: Annotated[list[str], typer.Option(
        "--branch", metavar="CHANNEL=BRANCH",
        help="The source's branch for CHANNEL, when it is not the channel's own branch "
        "(repeatable; written as the source's branches:).")] = [],  # noqa: B006 - never mutated
    ignore_freeze: Annotated[bool, typer.Option(
        "--ignore-freeze", help="Pin the source in frozen channels too (recorded: "
        "Clmgit-Override: ignore-freeze).")] = False,
    dry_run: DryRun = False,
    push: Push = False,
    sign: Sign = False,
    out: OutputOpt = Format.table,
) -> None:
    """Add a config source to a running fleet, in one commit of the control branch.

    The source is appended to sources: in clmgit.yaml (a repository that lists none first
    gets its own entry, main). Every group of every channel that has a pin keeps it as the
    main source's (a bare sha: becomes sha: {main: ...}) and is pinned to the head of the new
    source's branch for that channel; nothing else in a channel file changes, and a channel
    without groups follows its branch in every source. No cluster is blocked: each is out of
    sync until reconcile applies main=<sha>;NAME=<sha>. A frozen channel is refused, unless
    pinned there on purpose with --ignore-freeze (recorded). An unreadable repository or a
    missing branch writes nothing."""
    from clmgit.promotion.addsource import add_source

    branches: dict[str, str] = {}
    for value in branch:
        channel, sep, name_of_branch = value.partition("=")
        if not sep or not channel or not name_of_branch:
            raise ConfigError(f"--branch {value}: give CHANNEL=BRANCH")
        branches[channel] = name_of_branch
    ws = writing_workspace(ctx, push=push, sign=sign)
    with retry_hint():
        result = add_source(ws, name=name, repo=repo, branches=branches,
                            ignore_freeze=ignore_freeze, push=push, dry_run=dry_run)
    _show(result, out)


def _show(r: SourceAdded, fmt: Format) -> None:
    if fmt is not Format.table:
        output.emit(r, fmt, kind="SourceAdded", dry_run=r.outcome == "dry-run")
        return
    for c in r.channels:
        pinned = f"pins {', '.join(c.groups)}" if c.groups else "follows its branches"
        frozen = " (frozen, --ignore-freeze)" if c.frozen and c.groups else ""
        output.line(f"{c.channel}: {r.source} {c.branch} {c.sha[:7]}, {pinned}{frozen}")
    if r.outcome == "dry-run":
        output.line(f"would commit {', '.join(r.files)} ({r.message.splitlines()[0]})")
        output.line("dry run: nothing written")
    else:
        pushed = " and pushed" if r.pushed else ""
        output.line(f"source {r.source} added in {(r.commit or '')[:7]}{pushed}")
