"""How help reads: `-h` beside `--help`, and metavars in the conventional style — arguments
and option values in upper case (`promote SOURCE TARGET`, `--group NAME`), choices as
`[table|json|yaml]` — instead of Typer's `{source}` and `<list[str]>`; and the answers to a
completion script's requests (`clmgit completion SHELL`)."""

from __future__ import annotations

import enum
import os
from collections.abc import MutableMapping
from typing import Any

from typer import _click
from typer.core import TyperCommand, TyperGroup

from clmgit.cli.params import use_plain_coercion

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


def _name_value(param: _click.Parameter) -> None:
    """Give an option that takes a value, and has no metavar of its own, an upper-case one."""
    if param.param_type_name != "option" or getattr(param, "is_flag", False) or param.metavar:
        return
    desc = getattr(param, "type_descriptor", None)
    if desc is not None and desc.is_choice and desc.choices:
        choices = (c.value if isinstance(c, enum.Enum) else c for c in desc.choices)
        param.metavar = "[" + "|".join(map(str, choices)) + "]"
    else:  # named after the option, not the Python parameter: `--channel CHANNEL`
        longest = max(getattr(param, "opts", []) or [param.name or "value"], key=len)
        param.metavar = longest.lstrip("-").replace("-", "_").upper()


def _plain(option: _click.Parameter | None) -> _click.Parameter | None:
    """`--help`, which click makes when it parses, coerced as the other options are."""
    if option is not None:
        use_plain_coercion(option)
    return option


def _usage(argument: _click.Parameter) -> str:
    name = argument.metavar or (argument.name or "arg").upper()
    name = name if argument.required else f"[{name}]"
    return name + ("..." if argument.nargs != 1 else "")


class Group(TyperGroup):
    """A command group whose options read `--repo REPO`."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        for param in self.params:
            _name_value(param)
            use_plain_coercion(param)

    def get_help_option(self, ctx: _click.Context) -> Any:
        return _plain(super().get_help_option(ctx))

    def _main_shell_completion(self, ctx_args: MutableMapping[str, Any], prog_name: str,
                               complete_var: str | None = None) -> None:
        from clmgit.cli.completion import COMPLETE_VAR

        if os.environ.get(COMPLETE_VAR):  # only then: Typer's completion classes load slowly
            from typer.completion import (  # type: ignore[attr-defined]  # public, not in an __all__
                completion_init,
            )

            completion_init()
        super()._main_shell_completion(ctx_args, prog_name, COMPLETE_VAR)


class Command(TyperCommand):
    """A command whose usage reads `promote [OPTIONS] SOURCE TARGET`."""

    def __init__(self, name: str | None, **attrs: Any) -> None:
        super().__init__(name, **attrs)
        for param in self.params:
            _name_value(param)
            use_plain_coercion(param)
            if param.param_type_name == "argument" and param.metavar is None:
                param.metavar = (param.name or "arg").upper()

    def invoke(self, ctx: _click.Context) -> Any:
        """Note the command and its `-o` before it runs, so that an error it raises becomes its
        JSON or YAML document too (`clmgit.cli.output.emit_error`)."""
        from clmgit.cli.output import Format, invocation

        invocation.command = ctx.command_path.partition(" ")[2] or (self.name or "")
        invocation.fmt = next((v for v in ctx.params.values() if isinstance(v, Format)),
                              Format.table)
        invocation.emitted = False
        return super().invoke(ctx)

    def collect_usage_pieces(self, ctx: _click.Context) -> list[str]:
        arguments = [_usage(p) for p in self.params if p.param_type_name == "argument"]
        return [self.options_metavar or "", *arguments]

    def get_help_option(self, ctx: _click.Context) -> Any:
        return _plain(super().get_help_option(ctx))

    def format_options(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        arguments = [(p.metavar or "", getattr(p, "help", None) or "")
                     for p in self.get_params(ctx) if p.param_type_name == "argument"]
        options = [r for p in self.get_params(ctx) if p.param_type_name == "option"
                   if (r := p.get_help_record(ctx)) is not None]
        for title, records in (("Arguments", arguments), ("Options", options)):
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)
