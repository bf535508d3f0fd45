"""What every command group shares: the common options resolved once (carried in Typer's
context), the output format, and the option types used by more than one command."""

from __future__ import annotations

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
