"""`clmgit` run in-process through its real entry point."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

from clmgit.machine import release_frozen


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(*args: str) -> Result:
    """Run `clmgit ARGS` in-process through the real entry point, exit-code mapping included."""
    from clmgit import cli

    out, err = io.StringIO(), io.StringIO()
    old_argv = sys.argv
    sys.argv = ["clmgit", *args]
    code = 0
    try:
        with redirect_stdout(out), redirect_stderr(err):
            cli.main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = old_argv
        release_frozen()  # what the end of the command's process would do
    return Result(code, out.getvalue(), err.getvalue())
