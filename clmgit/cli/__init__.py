"""The command line: the Typer app in `main`, one module per command group, option parsing and
result rendering only; the work is in the library packages."""

from clmgit.cli.main import app, main

__all__ = ["app", "main"]
