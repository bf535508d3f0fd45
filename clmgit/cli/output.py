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
    """What `-o` chooses: a table for people, or the same data as JSON or YAML for programs.
    `wide` is the table with nothing cut to the terminal's width (see `choose_format`)."""

    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"


#: Whether tables keep every character (`-o wide`) rather than fitting the terminal.
_wide = False


def choose_format(fmt: Format) -> Format:
    """`-o`'s value as the views take it: `wide` is a table that is never cut."""
    global _wide
    _wide = fmt is Format.wide
    return Format.table if _wide else fmt


def terminal_width() -> int | None:
    """How wide a table may be: `COLUMNS`, else the terminal's width; None (no limit) with
    `-o wide` or when stdout is not a terminal (a pipe into grep gets every character)."""
    import os
    import shutil

    if _wide:
        return None
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


#: Values that are their own data (exact types: an enum that is also a str is not).
_PLAIN = frozenset({str, int, float, bool, type(None)})
_STR = frozenset({str})


#: Field metadata of a result type: the key is in the document only when its value is not
#: empty (None, "", an empty tuple).
OMIT_EMPTY = {"omit_empty": True}
#: Field metadata of a result type: what the table reads that the document leaves out.
TABLE_ONLY = {"table_only": True}


def to_data(value: Any) -> Any:
    """A result as JSON data: dataclasses as dicts of their fields (but `TABLE_ONLY` ones, and
    `OMIT_EMPTY` ones when empty), tuples as lists, enums as their values. Fast on the common
    values (a fleet's status is 10,000 dataclasses): the plain types are checked first and each
    class's field names are looked up once."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    names = _field_names(kind)
    if names is not None:
        omit = _OMITTED[kind]
        if not omit:
            return {name: to_data(getattr(value, name)) for name in names}
        return {name: to_data(v) for name in names
                if (v := getattr(value, name)) or name not in omit}
    if isinstance(value, list | tuple):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        if kind is dict and _STR.issuperset(map(type, value)) and _flat(value):
            return value  # already data: a fleet's records are not copied again
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    return value


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}
_OMITTED: dict[type, frozenset[str]] = {}


def _field_names(kind: type) -> tuple[str, ...] | None:
    """The data fields of a dataclass type, in order; None for any other type (a dataclass's
    instances are results; the class itself is not)."""
    try:
        return _FIELD_NAMES[kind]
    except KeyError:
        if not dataclasses.is_dataclass(kind):
            return _FIELD_NAMES.setdefault(kind, None)
        fields = [f for f in dataclasses.fields(kind) if not f.metadata.get("table_only")]
        _OMITTED[kind] = frozenset(f.name for f in fields if f.metadata.get("omit_empty"))
        return _FIELD_NAMES.setdefault(kind, tuple(f.name for f in fields))


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

        class Dumper(yaml.SafeDumper):
            def ignore_aliases(self, data: Any) -> bool:
                return True  # a dict to_data passed on as it is may stand twice: no `&id001`

        yaml.dump(doc, sys.stdout, Dumper=Dumper, default_flow_style=False, sort_keys=False,
                  allow_unicode=True)
        return
    # One string, one write: `json.dump` writes each of its thousands of pieces on its own.
    sys.stdout.write(indented_json(doc) + "\n")


#: Values the C encoder writes alone: a container of only these needs no indentation inside.
_SCALARS = frozenset({str, int, float, bool, type(None)})
_ENCODERS: dict[str, json.JSONEncoder] = {}


def _encode(value: Any, separator: str) -> str:
    """The C encoder, all on one line but for `separator` between items."""
    encoder = _ENCODERS.get(separator)
    if encoder is None:
        encoder = _ENCODERS.setdefault(separator, json.JSONEncoder(separators=(separator, ": ")))
    return encoder.encode(value)


def _flat(value: Any) -> bool:
    """A non-empty container of scalars only."""
    items = value.values() if type(value) is dict else value
    return bool(items) and _SCALARS.issuperset(map(type, items))


def indented_json(value: Any, level: int = 0) -> str:
    """`json.dumps(value, indent=2)`, byte for byte, several times as fast on a list of flat
    records (a fleet's status). json's C encoder writes no indentation, so it is given the
    line break and indent of a level as the separator between items: a container of scalars
    is one call, and so is a list of such records, whose joints are then re-indented (with
    ensure_ascii a line break is never inside a string, so a joint `},<break>{` is one)."""
    kind = type(value)
    if kind is not dict and kind is not list and kind is not tuple:
        return json.dumps(value)
    if not value:
        return "{}" if kind is dict else "[]"
    outer, pad, inner = "  " * level, "\n" + "  " * (level + 1), "\n" + "  " * (level + 2)
    if _flat(value):
        text = _encode(value, "," + pad)
        return f"{text[0]}{pad}{text[1:-1]}\n{outer}{text[-1]}"
    if kind is not dict and all(type(v) is dict and _flat(v) for v in value):
        body = _encode(value, "," + inner)[2:-2].replace(
            f"}},{inner}{{", f"\n{pad[1:]}}},{pad}{{{inner}")
        return f"[{pad}{{{inner}{body}\n{pad[1:]}}}\n{outer}]"
    if kind is dict and any(type(k) is not str for k in value):
        return json.dumps(value, indent=2).replace("\n", "\n" + outer)
    parts = ([f"{json.dumps(k)}: {indented_json(v, level + 1)}" for k, v in value.items()]
             if kind is dict else [indented_json(v, level + 1) for v in value])
    close = "}" if kind is dict else "]"
    return f"{'{' if kind is dict else '['}{pad}{(',' + pad).join(parts)}\n{outer}{close}"


def line(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def note(text: str) -> None:
    """A remark for the person at the terminal; on stderr so that stdout stays parseable."""
    from clmgit.logformat import stderr_line

    sys.stderr.write(stderr_line("info", text))


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]], *,
          shrink: Sequence[str] = ()) -> None:
    """A plain aligned table: fast for thousands of rows and safe to pipe into grep or awk.
    The `shrink` columns (free text: reasons, gates) are cut to fit the terminal's width."""
    cells = [[str(c) for c in columns]]
    cells += [["" if v is None else str(v) for v in r] for r in rows]
    widths = [max(map(len, column)) for column in zip(*cells, strict=True)]
    limit = terminal_width() if shrink else None
    if limit is not None:
        widths = _fit(widths, [columns.index(c) for c in shrink], limit)
        cells = [cells[0], *([_cut(v, w) for v, w in zip(r, widths, strict=True)]
                             for r in cells[1:])]
    ljust = str.ljust
    sys.stdout.write("\n".join(["  ".join(map(ljust, r, widths)).rstrip() for r in cells]) + "\n")


#: A shrunk column keeps at least this many characters (or its heading's).
_MIN_WIDTH = 12


def _fit(widths: list[int], shrinkable: Sequence[int], limit: int) -> list[int]:
    """Column widths that fit `limit` (with two spaces between columns), taken from the widest
    shrinkable column first; never below _MIN_WIDTH."""
    widths = list(widths)
    excess = sum(widths) + 2 * (len(widths) - 1) - limit
    while excess > 0:
        i = max(shrinkable, key=lambda k: widths[k], default=None)
        if i is None or widths[i] <= _MIN_WIDTH:
            break
        floor = max(_MIN_WIDTH, *(widths[k] for k in shrinkable if k != i), 0)
        step = min(excess, widths[i] - floor) or 1
        widths[i] -= step
        excess -= step
    return widths


def _cut(text: str, width: int) -> str:
    """`text` within `width`, cut with "…"; a trailing count such as "(+2 more)" is kept."""
    if len(text) <= width:
        return text
    import re

    more = re.search(r" \(\+\d+ more\)$", text)
    tail = more[0] if more and len(more[0]) < width - 4 else ""
    return text[:width - 1 - len(tail)].rstrip() + "…" + tail
