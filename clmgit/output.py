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
    """The one document a command writes for programs (README, "Output for programs"):

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
    has written none yet; True when written. Exit codes as in DESIGN.md §3."""
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
    json.dump(doc, sys.stdout, indent=2, sort_keys=False)
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
