"""The command line: the Typer app (`main`: common options, and the one place where errors become
exit codes), one module per command group, option parsing and output through `clmgit.cli.views`.
The work is in the library packages, which neither import Typer nor print (`convert` still does
part of its own here)."""

from clmgit.cli.main import app, main

__all__ = ["app", "main"]
