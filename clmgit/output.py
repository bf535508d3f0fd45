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


#: Values that are their own data (exact types: an enum that is also a str is not).
_PLAIN = frozenset({str, int, float, bool, type(None)})


def to_data(value: Any) -> Any:
    """A result as JSON data: dataclasses as dicts of their fields, tuples as lists, enums as
    their values. Fast on the common values (a fleet's status is 10,000 dataclasses): the plain
    types are checked first and each class's field names are looked up once."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    names = _field_names(kind)
    if names is not None:
        return {name: to_data(getattr(value, name)) for name in names}
    if isinstance(value, list | tuple):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    return value


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(kind: type) -> tuple[str, ...] | None:
    """The fields of a dataclass type, in order; None for any other type (a dataclass's
    instances are results; the class itself is not)."""
    try:
        return _FIELD_NAMES[kind]
    except KeyError:
        names = (tuple(f.name for f in dataclasses.fields(kind))
                 if dataclasses.is_dataclass(kind) else None)
        return _FIELD_NAMES.setdefault(kind, names)


#: The version of the envelope below; raised only with a change that breaks a reader.
API_VERSION = "clmgit/v1"


class _Invocation:
    """What the running command asked for: its name and output format (set by the CLI as the
    command starts), and whether it has written its document yet."""

    command: str = ""
    fmt: Format = Format.table
    emitted: bool = False


invocation = _Invocation()


def emit(value: Any, fmt: Format, *, kind: str, errors: Sequence[Any] = (),
         **extra: Any) -> None:
    """The one document a command writes for programs (docs/reference/output.md):

        {"apiVersion": "clmgit/v1", "kind": KIND, "items": [...] | "result": {...},
         ...extra, "errors": [{"message": ..., ...}]}

    A list is `items`, anything else `result`; `errors` is empty when the command did what was
    asked. JSON, or the same document as YAML in block style."""
    data = to_data(value)
    doc: dict[str, Any] = {"apiVersion": API_VERSION, "kind": kind}
    doc["items" if isinstance(data, list) else "result"] = data
    doc.update(to_data(extra))
    doc["errors"] = [to_data(e) for e in errors]
    _write(doc, fmt)


def emit_error(message: str, *, exit_code: int) -> bool:
    """A refusal or failure as the command's document, when it was asked for JSON or YAML and
    has written none yet; True when written. Exit codes: docs/reference/exit-codes.md."""
    if invocation.fmt is Format.table or invocation.emitted:
        return False
    _write({"apiVersion": API_VERSION, "kind": "Error", "command": invocation.command,
            "result": None,
            "errors": [{"message": message, "exit_code": exit_code}]}, invocation.fmt)
    return True


def _write(doc: dict[str, Any], fmt: Format) -> None:
    invocation.emitted = True
    if fmt is Format.yaml:
        import yaml  # lazily: every command imports this module, few print YAML

        yaml.safe_dump(doc, sys.stdout, default_flow_style=False, sort_keys=False,
                       allow_unicode=True)
        return
    # One string, one write: `json.dump` writes each of its thousands of pieces on its own.
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=False) + "\n")


def line(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def note(text: str) -> None:
    """A remark for the person at the terminal; on stderr so that stdout stays parseable."""
    from clmgit.logformat import stderr_line

    sys.stderr.write(stderr_line("info", text))


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A plain aligned table: fast for thousands of rows and safe to pipe into grep or awk."""
    cells = [[str(c) for c in columns]]
    cells += [["" if v is None else str(v) for v in r] for r in rows]
    widths = [max(map(len, column)) for column in zip(*cells, strict=True)]
    ljust = str.ljust
    sys.stdout.write("\n".join(["  ".join(map(ljust, r, widths)).rstrip() for r in cells]) + "\n")
