"""`clmgit completion SHELL`: print the shell's completion script (Typer's own), to be sourced
or saved by the user; nothing is installed. The app answers the script's requests itself
(see `clmgit.cli.helpstyle.Group`)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated

import typer

from clmgit.cli import output

COMPLETE_VAR = "_CLMGIT_COMPLETE"


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def completion(
    shell: Annotated[Shell, typer.Argument(help="bash, zsh or fish.")],
) -> None:
    """Print a completion script, e.g. `source <(clmgit completion bash)` in ~/.bashrc."""
    from typer.completion import (  # type: ignore[attr-defined]  # public, not in an __all__
        get_completion_script,
    )

    output.line(get_completion_script(prog_name="clmgit", complete_var=COMPLETE_VAR,
                                      shell=shell.value))


COMMANDS: dict[str, Callable[..., None]] = {"completion": completion}
