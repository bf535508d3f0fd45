"""What every command group shares: the common options resolved once (carried in Typer's
context), the output format, and the option types used by more than one command."""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

import typer

from clmgit.cli.output import Format as Format  # re-exported: the commands take it from here
from clmgit.cli.output import choose_format

if TYPE_CHECKING:
    from clmgit.workspace import Workspace


class Settings:
    """The common options, resolved once; the workspace is opened on first use."""

    def __init__(self, repo: str = ".", registry: str | None = None,
                 control_branch: str = "main", verbose: bool = False):
        self.repo, self.registry, self.control_branch = repo, registry, control_branch
        self.verbose = verbose
        self._ws: Workspace | None = None

    @property
    def ws(self) -> Workspace:
        if self._ws is None:
            self._ws = self.open()
        return self._ws

    def reopen(self) -> Workspace:
        """A newly opened workspace, from now on this invocation's (the controller's round:
        its notifications read clmgit.yaml as the round does)."""
        self._ws = self.open()
        return self._ws

    def open(self) -> Workspace:
        """A newly opened workspace."""
        from clmgit.workspace import open_workspace  # lazily: keeps start-up fast

        return open_workspace(self.repo, registry=self.registry,
                              control_branch=self.control_branch)


def settings(ctx: typer.Context) -> Settings:
    """The common options of this invocation (set by the app's callback on the root context)."""
    found = ctx.find_object(Settings)
    if found is None:  # a sub-app run on its own, as in tests: the defaults
        found = ctx.ensure_object(Settings)
    return found


Groups = Annotated[list[str], typer.Option("--group", "-g", metavar="NAME",
                                           help="Only this group (repeatable).")]
OutputOpt = Annotated[Format, typer.Option(
    "--output", "-o", callback=choose_format,
    help="table (cut to the terminal's width), wide (the table, nothing cut), json or yaml.")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show the plan; write nothing.")]
Push = Annotated[bool, typer.Option("--push", help="Push to origin in one atomic push.")]
Sign = Annotated[bool, typer.Option(
    "--sign", help="Sign the commit (git's gpg.format and user.signingKey); without it, "
    "clmgit signs when git's commit.gpgSign is true.")]


def writing_workspace(ctx: typer.Context, *, push: bool, pr: bool = False,
                      sign: bool = False) -> Workspace:
    """The workspace a change is planned in. With --push or --pr the plan is made against the
    remote, where the change will land (see clmgit/promotion/remote.py). Its commits are signed
    with --sign or as git is set."""
    if push and pr:
        raise typer.BadParameter(
            "--push and --pr exclude each other: --push lands the change, --pr proposes it",
            param_hint="'--pr'",
        )
    ws = settings(ctx).ws
    if push or pr:
        from clmgit.promotion.remote import remote_workspace

        ws = remote_workspace(ws, carry_local=push)
    from clmgit.signing import wants_signing

    ws.repo.sign = sign or wants_signing(ws.repo)
    return ws


@contextlib.contextmanager
def retry_hint() -> Iterator[None]:
    """A rejected push names the command that finishes the job: this one again, which fetches
    and plans on what the remote has now."""
    from clmgit.errors import PushRejectedError

    try:
        yield
    except PushRejectedError as e:
        again = shlex.join(["clmgit", *sys.argv[1:]])
        raise PushRejectedError(f"{e}: {again}") from None
