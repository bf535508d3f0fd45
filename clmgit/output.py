"""Rendering of results for people (tables, lines) and for programs (JSON, YAML). Nothing else
prints."""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
from collections.abc import Sequence
from enum import StrEnum
from typing import Any


class Format(StrEnum):
    """What `-o` chooses: a table for people, or the same data as JSON or YAML for programs."""

    table = "table"
    json = "json"
    yaml = "yaml"


def to_data(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    return value


def emit(value: Any, fmt: Format) -> None:
    """The data of a result for programs: JSON, or the same as YAML in block style."""
    data = to_data(value)
    if fmt is Format.yaml:
        import yaml  # lazily: every command imports this module, few print YAML

        yaml.safe_dump(data, sys.stdout, default_flow_style=False, sort_keys=False,
                       allow_unicode=True)
        return
    json.dump(data, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


def line(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def note(text: str) -> None:
    """A remark for the person at the terminal; on stderr so that stdout stays parseable."""
    sys.stderr.write(text + "\n")


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A plain aligned table: fast for thousands of rows and safe to pipe into grep or awk."""
    cells = [[str(c) for c in columns]] + [["" if v is None else str(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    out = []
    for r in cells:
        out.append("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    sys.stdout.write("\n".join(out) + "\n")
