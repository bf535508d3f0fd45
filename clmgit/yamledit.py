"""Edits of YAML files that people wrote, keeping every byte that the edit does not change.

ruamel.yaml's round-trip parser tells where each key stands; the edit replaces just the scalar
token of a value (keeping its quoting style) or inserts a `key: value` line beside its siblings.
Every edit is checked by parsing the result back: the data must equal the old data with exactly
the requested change. Where a layout is beyond a token splice (flow style, block scalars), the
edit falls back to a ruamel round-trip dump, which keeps comments and order, and is checked too.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

from clmgit import yamlsafe
from clmgit.errors import ConfigError

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap

Scalar = str | int | bool | None
#: A value `Document.set` writes: a scalar, or a flat mapping of scalars written as one flow
#: mapping on the key's line (a pin of several config sources: `sha: {main: ..., addons: ...}`).
Value = Scalar | Mapping[str, Scalar]
Path = Sequence[str | int]

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str | bytes, name: str) -> Any:
    """Parse YAML fast (libyaml where present), within `clmgit.yamlsafe`'s limits; a syntax
    error names the file and line."""
    try:
        return yamlsafe.load(text, name, _SAFE_LOADER)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{name}: malformed YAML{where}: {problem}") from None


def normalize(value: Any) -> Any:
    """Plain data for comparisons: timestamps as ISO strings, containers as dict/list."""
    if isinstance(value, Mapping):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(v) for v in value]
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


class Document:
    """A YAML file being edited; `text` is the result.

    Edits work on the text with `\n` line ends and a final newline; the file's own form — a
    byte order mark, CRLF line ends (when every line has one), no newline at the end — is put
    back on the result, so those bytes stay as they were too.
    """

    def __init__(self, text: str, name: str) -> None:
        self.name = name
        self._form = _Form.of(text)
        self._body = self._form.strip(text)
        self._parse()

    @property
    def text(self) -> str:
        return self._form.restore(self._body)

    def _parse(self) -> None:
        # ruamel.yaml only here, where a file is edited: the commands that only read (status)
        # do not pay for importing it.
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError as RuamelYAMLError

        yamlsafe.check(self._body, self.name)
        try:
            self._tree = YAML(typ="rt").load(self._body)
        except RuamelYAMLError as e:
            raise ConfigError(f"{self.name}: malformed YAML: {str(e).splitlines()[0]}") from None
        self.data = normalize(load(self._body, self.name))

    def set(self, path: Path, values: Mapping[str, Value]) -> None:
        """Set `values` in the mapping at `path` (keys missing there are added after `after`)."""
        expected = json.loads(json.dumps(self.data))
        target = _walk(expected, path)
        if not isinstance(target, dict):
            raise ConfigError(f"{self.name}: {'.'.join(map(str, path))} is not a mapping")
        target.update({k: normalize(v) for k, v in values.items()})
        before = self._body
        try:
            for key, value in values.items():
                self._splice(path, key, value)
            self._check(expected)
        except _CannotSplice:
            self._body = before
            self._dump_round_trip(path, values)
            self._check(expected)

    def append_block(self, block: str, expected: Any) -> None:
        """Append a top-level block of YAML text, for a key the file does not have yet."""
        self._body += block
        self._check(normalize(expected))

    def append(self, path: Path, item: Mapping[str, Value]) -> None:
        """Append a mapping of flat values to the block list at `path`, as lines after its last
        item in that item's indentation; a list in any other form is dumped by a round trip."""
        expected = json.loads(json.dumps(self.data))
        target = _walk(expected, path)
        if not isinstance(target, list):
            raise ConfigError(f"{self.name}: {'.'.join(map(str, path))} is not a list")
        target.append(normalize(dict(item)))
        from ruamel.yaml import YAML
        from ruamel.yaml.comments import CommentedSeq

        node = _walk(self._tree, path)
        if isinstance(node, CommentedSeq) and len(node) and not node.fa.flow_style():
            line_no, col = node.lc.item(len(node) - 1)
            lines = _lines(self._body)
            if col >= 2 and lines[line_no][col - 2:col] == "- ":
                end = _entry_end(lines, line_no, col - 1)
                pad = " " * (col - 2)
                lines[end:end] = [pad + ("- " if i == 0 else "  ") + f"{k}: {format_scalar(v)}\n"
                                  for i, (k, v) in enumerate(item.items())]
                self._body = "".join(lines)
                self._parse()
                self._check(expected)
                return
        rt = YAML(typ="rt")
        rt.preserve_quotes = True
        tree = rt.load(self._body)
        _walk(tree, path).append(dict(item))
        out = io.StringIO()
        rt.dump(tree, out)
        self._body = out.getvalue()
        self._parse()
        self._check(expected)

    # --- the splice ------------------------------------------------------------------------

    def _splice(self, path: Path, key: str, value: Value) -> None:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        node = _walk(self._tree, path)
        if not isinstance(node, CommentedMap) or node.fa.flow_style():
            raise _CannotSplice
        lines = _lines(self._body)
        if key in node:
            flow_map = isinstance(node[key], CommentedMap) and node[key].fa.flow_style()
            if isinstance(node[key], CommentedMap | CommentedSeq) and not (
                    flow_map and isinstance(value, Mapping)):
                raise _CannotSplice
            line_no, col = node.lc.key(key)
            lines[line_no] = _replace_value(lines[line_no], col, key, value)
        else:
            anchor = _last_scalar_key(node)
            if anchor is None:
                raise _CannotSplice
            line_no, col = node.lc.key(anchor)
            end = _entry_end(lines, line_no, col)
            lines.insert(end, " " * col + f"{key}: {format_scalar(value)}\n")
        self._body = "".join(lines)
        self._parse()

    def _check(self, expected: Any) -> None:
        actual = normalize(load(self._body, self.name))
        if actual != expected:
            raise ConfigError(f"{self.name}: could not edit the file safely; nothing was written")
        self.data = actual

    def _dump_round_trip(self, path: Path, values: Mapping[str, Value]) -> None:
        from ruamel.yaml import YAML

        rt = YAML(typ="rt")
        rt.preserve_quotes = True
        tree = rt.load(self._body)
        node = _walk(tree, path)
        for key, value in values.items():
            node[key] = value
        out = io.StringIO()
        rt.dump(tree, out)
        self._body = out.getvalue()
        self._parse()


class _CannotSplice(Exception):
    pass


@dataclass(frozen=True)
class _Form:
    """What a file's text has around its YAML: a BOM, CRLF line ends, a final newline or not."""

    bom: bool
    crlf: bool
    final_newline: bool

    @classmethod
    def of(cls, text: str) -> _Form:
        lf = text.count("\n")
        return cls(bom=text.startswith(_BOM), crlf=lf > 0 and text.count("\r\n") == lf,
                   final_newline=not text.removeprefix(_BOM) or text.endswith("\n"))

    def strip(self, text: str) -> str:
        text = text.removeprefix(_BOM)
        if self.crlf:
            text = text.replace("\r\n", "\n")
        return text if self.final_newline else text + "\n"

    def restore(self, body: str) -> str:
        if not self.final_newline:
            body = body.removesuffix("\n")
        if self.crlf:
            body = body.replace("\n", "\r\n")
        return _BOM + body if self.bom else body


_BOM = "\ufeff"


def _lines(text: str) -> list[str]:
    """Lines split at `\n` only, ends kept: where the YAML parser counts lines (str.splitlines
    would also split at form feeds and other separators inside a comment)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _walk(node: Any, path: Path) -> Any:
    for part in path:
        node = node[part]
    return node


def _last_scalar_key(node: CommentedMap) -> str | None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    scalar_keys: list[str] = [
        k for k, v in node.items() if not isinstance(v, CommentedMap | CommentedSeq)]
    if not scalar_keys:
        return None
    return max(scalar_keys, key=lambda k: node.lc.key(k)[0])


def _entry_end(lines: list[str], line_no: int, col: int) -> int:
    """The index of the line after the entry whose key starts at (line_no, col)."""
    end = line_no + 1
    for i in range(line_no + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(lines[i]) - len(lines[i].lstrip(" "))
        if indent <= col:
            break
        end = i + 1
    return end


_PLAIN_END = re.compile(r"\s+#|\s*$")


def _replace_value(line: str, col: int, key: str, value: Value) -> str:
    colon = line.find(":", col + len(key))
    if colon < 0:
        raise _CannotSplice
    start = colon + 1
    while start < len(line) and line[start] == " ":
        start += 1
    body = line.rstrip("\r\n")
    newline = line[len(body) :]
    rest = body[start:]
    if not rest or rest.startswith("#"):  # a null value: `key:` or `key:  # comment`
        gap = "" if body[colon + 1 : start] else " "
        new = format_scalar(value)
        tail = (" " + rest) if rest else ""
        return body[:start] + gap + new + tail + newline
    end = rest.find("}") + 1 if rest.startswith("{") else _token_end(rest)
    if end <= 0:
        raise _CannotSplice  # a flow mapping that goes on past its line
    old = rest[:end]
    return body[:start] + format_scalar(value, old) + rest[end:] + newline


def _token_end(rest: str) -> int:
    first = rest[0]
    if first in "|>{[&*!":
        raise _CannotSplice
    if first == '"':
        i = 1
        while i < len(rest):
            if rest[i] == "\\":
                i += 2
                continue
            if rest[i] == '"':
                return i + 1
            i += 1
        raise _CannotSplice  # a quoted scalar over several lines
    if first == "'":
        i = 1
        while i < len(rest):
            if rest[i] == "'":
                if rest[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        raise _CannotSplice
    match = _PLAIN_END.search(rest)
    assert match is not None
    return match.start()


def format_scalar(value: Value, old_token: str | None = None) -> str:
    """A YAML token for `value`, in the quoting style of the token it replaces where it can;
    a flat mapping as one flow mapping."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{format_scalar(k)}: {format_scalar(v)}"
                               for k, v in value.items()) + "}"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if _UNPRINTABLE.search(value):
        return _double_quoted(value)  # only a double-quoted scalar can escape these
    if old_token and old_token[0] == "'":
        return "'" + value.replace("'", "''") + "'"
    if old_token and old_token[0] == '"':
        return _double_quoted(value)
    plain_ok = _plain_loads_as(value, value)
    if old_token:
        # An unquoted old value that YAML reads as a timestamp or number stays unquoted when the
        # new value is read the same way, so a file's style is kept.
        old = _safe_scalar(old_token)
        new = _safe_scalar(value)
        if not isinstance(old, str) and old is not None and type(old) is type(new):
            plain_ok = normalize(new) == normalize(value)
    return value if plain_ok else _double_quoted(value)


#: Characters YAML does not allow raw in a file, or reads as line breaks, or a tab (which ends a
#: plain scalar's meaning): written as escapes in a double-quoted scalar. Listed as they are,
#: not as the complement of what is allowed, which takes 20 ms to compile at every start.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def _double_quoted(value: str) -> str:
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}",
                            json.dumps(value, ensure_ascii=False))


def _safe_scalar(token: str) -> object:
    try:
        return yaml.load(token, Loader=_SAFE_LOADER)
    except yaml.YAMLError:
        return None


def _plain_loads_as(token: str, value: str) -> bool:
    if not token or token != token.strip() or "\n" in token or ": " in token or " #" in token:
        return False
    if token[0] in "!&*{}[]|>'\"%@`#,?:-":
        return False
    return _safe_scalar(token) == value
