"""Typer's coercion of option values, without pydantic where no pydantic is needed.

Typer 0.29 coerces each value through a pydantic `TypeAdapter`; importing pydantic and building
the adapters costs about 0.13 s of every command, an eighth of `status` at 10,000 clusters.
The values clmgit's options take are text, flags, lists of text, integers and enum choices,
which need no schema: `PlainParam` gives each the value Typer's adapter gives, and hands
everything else — ranges, parsers, paths, a value it does not recognise, every error — to
Typer's own coercion, built when first needed, so every message stays Typer's
(tests/test_cli_params.py holds the two equal over every kind of option of the app).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any

from typer import _click
from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import coerce_cli_choice
from typer.core import _TyperParameter

_INTEGER = re.compile(r"-?[0-9]+")


@dataclass(frozen=True)
class PlainParam(RuntimeParam):
    """Coercion of a `str`, `bool`, `list[str]`, `int` or enum option, Typer's for anything else."""

    descriptor: TypeDescriptor

    def _coerce_value(self, value: Any, param: _TyperParameter, ctx: _click.Context) -> Any:
        kind = self.annotation
        if kind in (str, bool) and type(value) is kind:
            return value
        if kind == list[str] and isinstance(value, (list, tuple)) \
                and all(type(v) is str for v in value):
            return list(value)
        if kind is int and (type(value) is int
                            or (type(value) is str and _INTEGER.fullmatch(value))):
            return int(value)
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            try:
                return coerce_cli_choice(value, choices=tuple(kind),
                                         case_sensitive=self.parameter_info.case_sensitive,
                                         ctx=ctx)
            except ValueError:
                pass  # Typer's adapter words the error
        return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)


def use_plain_coercion(param: _click.Parameter) -> None:
    """Give `param` the plain coercion when its type needs no schema."""
    descriptor = getattr(param, "type_descriptor", None)
    if not isinstance(param, _TyperParameter) or descriptor is None:
        return
    info = descriptor.parameter_info
    if info.parser is not None or descriptor.is_ranged or descriptor.is_file:
        return
    kind = descriptor.annotation
    if kind in (str, bool, int) or kind == list[str] \
            or (isinstance(kind, type) and issubclass(kind, enum.Enum)):
        param._runtime_param = PlainParam(info, kind, descriptor)
