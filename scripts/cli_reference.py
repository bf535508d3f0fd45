"""Write the command-line reference (docs/reference/cli.md) from the Typer app itself: every
command, its arguments and options, their defaults and environment variables, as `--help`
shows them. `make docs-cli` writes it; `--check` exits 1 when the page is stale, and
tests/test_cli_reference.py fails then.

    python scripts/cli_reference.py [--check] [PATH]
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Any

# Typer carries its own copy of click: its commands, parameters and contexts are of these classes.
from typer._click import core as click

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "cli.md"
HEADER = """# Command-line reference

<!-- Generated from the Typer app by `make docs-cli` (scripts/cli_reference.py); do not edit.
     tests/test_cli_reference.py fails when this page and the code disagree. -->

Every command of `clmgit`, with its arguments and options as `clmgit COMMAND --help` shows
them. Options given before the command (`clmgit --repo URL status`) are the common options;
an option with an environment variable reads it when the option is not given.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _is_option(param: click.Parameter) -> bool:
    return param.param_type_name == "option"


def _default(param: click.Parameter) -> str:
    value = param.default
    flag = _is_option(param) and (getattr(param, "is_flag", False) or getattr(param, "count", 0))
    if callable(value) or value in (None, (), []) or (flag and not value):
        return ""
    if isinstance(value, enum.Enum):
        value = value.value
    return f"`{str(value).lower() if isinstance(value, bool) else value}`"


def _names(param: click.Parameter, ctx: click.Context) -> str:
    if not _is_option(param):
        return f"`{param.metavar or (param.name or '').upper()}`"
    record = param.get_help_record(ctx)
    return f"`{record[0]}`" if record else ""


def _envvar(param: click.Parameter) -> str:
    env = param.envvar
    if not env:
        return ""
    return ", ".join(f"`{e}`" for e in ([env] if isinstance(env, str) else env))


def _params(command: click.Command, ctx: click.Context) -> list[str]:
    rows = []
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        text = getattr(param, "help", None) or ""
        if not _is_option(param) and not param.required:
            text += " (optional)"
        if getattr(param, "multiple", False) and "repeatable" not in text:
            text += " (repeatable)"
        rows.append(f"| {_names(param, ctx)} | {_cell(text)} | {_default(param)} | "
                    f"{_envvar(param)} |")
    if not rows:
        return []
    return ["| argument or option | meaning | default | environment |",
            "|---|---|---|---|", *rows]


def _usage(command: click.Command, ctx: click.Context) -> str:
    return " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])


def _section(command: click.Command, ctx: click.Context, level: int) -> list[str]:
    title = ctx.command_path if level > 1 else "Common options"
    lines = [f"{'#' * (level + 1)} `{title}`" if level > 1 else "## Common options", ""]
    lines += ["```", _usage(command, ctx), "```", ""]
    if command.help:
        lines += [command.help.replace("\b\n", "").strip(), ""]
    table = _params(command, ctx)
    if table:
        lines += [*table, ""]
    if hasattr(command, "list_commands"):  # a group
        group: Any = command
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            sub_ctx = click.Context(sub, info_name=name, parent=ctx, **sub.context_settings)
            lines += _section(sub, sub_ctx, min(level + 1, 3))
    return lines


def render(command: click.Command, prog_name: str = "clmgit") -> str:
    """The reference page of `command` (the app as a click command), as Markdown."""
    ctx = click.Context(command, info_name=prog_name, **command.context_settings)
    body = _section(command, ctx, 1)
    return HEADER + "\n" + "\n".join(body).rstrip() + "\n"


def app_command() -> Any:
    """clmgit's Typer app as a click command."""
    import typer.main

    from clmgit.cli.main import app

    return typer.main.get_command(app)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [a for a in argv if not a.startswith("-")]
    page = Path(paths[0]) if paths else PAGE
    text = render(app_command())
    if check:
        if not page.exists() or page.read_text() != text:
            sys.stderr.write(f"{page} is stale: run `make docs-cli`\n")
            return 1
        return 0
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
