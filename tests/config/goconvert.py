"""A test helper, until the real converter lands ([6/8]): Go text/template → Jinja2, mechanical
and only as complete as kubernetes-on-aws needs. Pipelines become nested calls of the same
functions (CLM's names, CLM's argument order: a piped value goes last); `.` is tracked through
`range` and `with`; `define`d templates become macros hoisted to the top.

Go builtins map to `_go_*` globals that `GO_BUILTINS` provides.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clmgit.config.clmfuncs import go_string

_ACTION_RE = re.compile(
    r"""\{\{(-\s)?((?:"(?:[^"\\]|\\.)*"|`[^`]*`|'(?:[^'\\]|\\.)*'|[^"`'}]|\}(?!\}))*?)(\s-)?\}\}""",
    re.DOTALL)
_TOKEN_RE = re.compile(r"""
    (?P<str>"(?:[^"\\]|\\.)*") | (?P<raw>`[^`]*`) | (?P<char>'(?:[^'\\]|\\.)*')
  | (?P<lp>\() | (?P<rp>\)) | (?P<pipe>\|) | (?P<decl>:=) | (?P<assign>=) | (?P<comma>,)
  | (?P<num>[+-]?[0-9][0-9a-fA-Fx._eE+-]*)
  | (?P<var>\$[A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)
  | (?P<field>(?:\.[A-Za-z0-9_]+)+|\.)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)
  | (?P<ws>\s+)
""", re.VERBOSE)
_BUILTINS = {"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "len", "index", "printf",
             "print", "println", "slice"}


class ConvertError(ValueError):
    pass


def convert(source: str) -> str:
    """The Jinja text of a Go template."""
    return _Converter(source).run()


class _Converter:
    def __init__(self, source: str) -> None:
        self.source = source
        self.dots = ["_root"]  # what `.` is, innermost last
        self.blocks: list[str] = []  # open block kinds
        self.n = 0
        self.macros: list[str] = []
        self.out: list[str] = []
        self.sink = self.out

    def run(self) -> str:
        pos = 0
        for m in _ACTION_RE.finditer(self.source):
            self._text(self.source[pos:m.start()])
            pos = m.end()
            self._action(m.group(2).strip(), m.group(1) is not None, m.group(3) is not None)
        self._text(self.source[pos:])
        if self.blocks:
            raise ConvertError(f"unclosed {self.blocks[-1]}")
        return "".join(self.macros) + "".join(self.out)

    def _text(self, text: str) -> None:
        if not text:
            return
        if "{%" in text or "{#" in text or "{{" in text or "%}" in text or "#}" in text:
            self.sink.append("{% raw %}" + text + "{% endraw %}")
        else:
            self.sink.append(text)

    def _tag(self, body: str, left: bool, right: bool, *, expr: bool = False) -> None:
        o, c = ("{{", "}}") if expr else ("{%", "%}")
        self.sink.append(f"{o}{'-' if left else ''} {body} {'-' if right else ''}{c}")

    def _var(self) -> str:
        self.n += 1
        return f"_d{self.n}"

    def _action(self, body: str, left: bool, right: bool) -> None:
        if body.startswith("/*"):
            self._tag("if false", left, False)
            self._tag("endif", False, right)
            return
        word = body.split(None, 1)[0] if body else ""
        rest = body[len(word):].strip()
        if word == "if":
            self.blocks.append("if")
            self.dots.append(self.dots[-1])
            self._tag(f"if _go_truth({self.expr(rest)})", left, right)
        elif word == "else":
            if rest.startswith("if "):
                self._tag(f"elif _go_truth({self.expr(rest[3:])})", left, right)
            elif rest.startswith("with "):
                raise ConvertError("else with is not supported")
            else:
                kind = self.blocks[-1]
                if kind == "with":
                    self.dots[-1] = self.dots[-2]
                self._tag("else", left, right)
        elif word == "end":
            kind = self.blocks.pop()
            if kind == "define":
                self._tag("endmacro", left, right)
                self.sink = self.out
                self.dots = ["_root"]
            else:
                self.dots.pop()
                self._tag({"if": "endif", "with": "endif", "range": "endfor"}[kind], left, right)
        elif word == "range":
            self.blocks.append("range")
            names, source = self._decl(rest)
            dot = self._var()
            src = self.expr(source)
            if len(names) == 2:
                target = f"{_name(names[0])}, {dot} in _go_items({src})"
            elif len(names) == 1:
                target = f"{dot} in _go_values({src})"
            else:
                target = f"{dot} in _go_values({src})"
            self._tag(f"for {target}", left, right)
            if len(names) >= 1:
                self._tag(f"set {_name(names[-1])} = {dot}", False, False)
            self.dots.append(dot)
        elif word == "with":
            self.blocks.append("with")
            names, source = self._decl(rest)
            dot = self._var()
            self._tag(f"set {dot} = {self.expr(source)}", left, False)
            if names:
                self._tag(f"set {_name(names[0])} = {dot}", False, False)
            self._tag(f"if _go_truth({dot})", False, right)
            self.dots.append(dot)
        elif word == "define":
            name = _string(rest)
            self.blocks.append("define")
            self.dots = ["_d0"]
            self.sink = self.macros
            self._tag(f"macro {_macro(name)}(_d0)", left, right)
        elif word == "template":
            parts = rest.split(None, 1)
            arg = self.expr(parts[1]) if len(parts) > 1 else "none"
            self._tag(f"{_macro(_string(parts[0]))}({arg})", left, right, expr=True)
        else:
            names, source = self._decl(body)
            if names:
                self._tag(f"set {_name(names[0])} = {self.expr(source)}", left, right)
            elif (m := re.match(r"^(\$\w+)\s*=\s*(.*)$", body, re.DOTALL)):
                self._tag(f"set {_name(m.group(1))} = {self.expr(m.group(2))}", left, right)
            else:
                self._tag(f"_go_out({self.expr(body)})", left, right, expr=True)

    def _decl(self, text: str) -> tuple[list[str], str]:
        m = re.match(r"^(\$\w*)\s*(?:,\s*(\$\w*)\s*)?:=\s*(.*)$", text, re.DOTALL)
        if not m:
            return [], text
        return [n for n in (m.group(1), m.group(2)) if n], m.group(3)

    # -- expressions --------------------------------------------------------------------------

    def expr(self, text: str) -> str:
        tokens = [(kind, value) for kind, value in _tokens(text) if kind != "ws"]
        result, pos = self._pipeline(tokens, 0)
        if pos != len(tokens):
            raise ConvertError(f"cannot read {text!r}")
        return result

    def _pipeline(self, tokens: list[tuple[str, str]], pos: int) -> tuple[str, int]:
        value, pos = self._command(tokens, pos, None)
        while pos < len(tokens) and tokens[pos][0] == "pipe":
            value, pos = self._command(tokens, pos + 1, value)
        return value, pos

    def _command(self, tokens: list[tuple[str, str]], pos: int,
                 piped: str | None) -> tuple[str, int]:
        operands: list[str] = []
        head: str | None = None
        while pos < len(tokens) and tokens[pos][0] not in ("pipe", "rp"):
            kind, value = tokens[pos]
            if kind == "ident" and not operands and head is None and value not in (
                    "true", "false", "nil"):
                head = value
                pos += 1
                continue
            operand, pos = self._operand(tokens, pos)
            operands.append(operand)
        if piped is not None:
            operands.append(piped)
        if head is None:
            if len(operands) > 1:  # a method with arguments: `.Values.InstanceInfo.F 0.9 x`
                return f"{operands[0]}({', '.join(operands[1:])})", pos
            return operands[0], pos
        if head in _BUILTINS:
            return f"_go_{head}({', '.join(operands)})", pos
        return f"{head}({', '.join(operands)})", pos

    def _operand(self, tokens: list[tuple[str, str]], pos: int) -> tuple[str, int]:
        kind, value = tokens[pos]
        if kind == "lp":
            inner, pos = self._pipeline(tokens, pos + 1)
            if pos >= len(tokens) or tokens[pos][0] != "rp":
                raise ConvertError("unbalanced parentheses")
            pos += 1
            # a field of a parenthesised value: `(index .x 0).Name`
            if pos < len(tokens) and tokens[pos][0] == "field" and tokens[pos][1] != ".":
                inner = f"({inner}){tokens[pos][1]}"
                pos += 1
            return f"({inner})", pos
        if kind in ("str", "char"):
            return _py_string(value), pos + 1
        if kind == "raw":
            return repr(value[1:-1]), pos + 1
        if kind == "num":
            return value, pos + 1
        if kind == "ident":
            return {"true": "true", "false": "false", "nil": "none"}.get(value, value), pos + 1
        if kind == "field":
            return (self.dots[-1] if value == "." else self.dots[-1] + value), pos + 1
        if kind == "var":
            name, _, fields = value.partition(".")
            base = self.dots[0] if name == "$" else _name(name)
            return base + ("." + fields if fields else ""), pos + 1
        raise ConvertError(f"unexpected {value!r}")


def _tokens(text: str) -> list[tuple[str, str]]:
    pos, found = 0, []
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if not m or m.end() == pos:
            raise ConvertError(f"cannot read {text[pos:]!r}")
        found.append((m.lastgroup or "", m.group()))
        pos = m.end()
    return found


def _name(var: str) -> str:
    return "v_" + var[1:] if var != "$" else "_root"


def _macro(name: str) -> str:
    return "t_" + re.sub(r"\W", "_", name)


def _string(token: str) -> str:
    token = token.strip()
    if token.startswith("`"):
        return token[1:-1]
    return str(eval(_py_string(token)))


def _py_string(token: str) -> str:
    return token if token.startswith('"') else '"' + token[1:-1] + '"'


# -- Go's builtins, as the converted templates call them ----------------------------------------

def _truth(value: Any) -> bool:
    return bool(value)


def _eq(a: Any, *others: Any) -> bool:
    return any(a == b for b in others)


def _index(value: Any, *keys: Any) -> Any:
    for key in keys:
        if isinstance(value, Mapping):
            value = value.get(key, "")
        else:
            value = value[key]
    return value


def _items(value: Any) -> list[tuple[Any, Any]]:
    if isinstance(value, Mapping):
        return [(k, value[k]) for k in sorted(value)]
    if isinstance(value, int) and not isinstance(value, bool):
        return list(enumerate(range(value)))
    return list(enumerate(value or ()))


def _values(value: Any) -> list[Any]:
    return [v for _, v in _items(value)]


def _printf(fmt: str, *args: Any) -> str:
    values = iter(args)

    def one(m: re.Match[str]) -> str:
        verb = m.group(2)
        if verb == "%":
            return "%"
        arg = next(values)
        if verb == "q":
            return '"' + go_string(arg).replace("\\", "\\\\").replace('"', '\\"') + '"'
        if verb in "dfg" and m.group(1):
            return ("%" + m.group(1) + verb) % arg
        return go_string(arg)

    return re.sub(r"%([-+ 0#]?[0-9.]*)([a-zA-Z%])", one, fmt)


def _sprint(*args: Any) -> str:
    """Go's `fmt.Sprint`: a space between two operands when neither is a string."""
    out = ""
    for i, arg in enumerate(args):
        if i and not isinstance(arg, str) and not isinstance(args[i - 1], str):
            out += " "
        out += go_string(arg)
    return out


def _out(value: Any) -> Any:
    if value is None:
        return "<no value>"
    if isinstance(value, bool | float | list | tuple | Mapping):
        return go_string(value)
    return value


GO_BUILTINS: dict[str, Any] = {
    "_go_truth": _truth,
    "_go_eq": _eq,
    "_go_ne": lambda a, b: a != b,
    "_go_lt": lambda a, b: a < b,
    "_go_le": lambda a, b: a <= b,
    "_go_gt": lambda a, b: a > b,
    "_go_ge": lambda a, b: a >= b,
    "_go_and": lambda *a: next((x for x in a if not x), a[-1]),
    "_go_or": lambda *a: next((x for x in a if x), a[-1]),
    "_go_not": lambda a: not a,
    "_go_len": len,
    "_go_index": _index,
    "_go_printf": _printf,
    "_go_print": _sprint,
    "_go_out": _out,
    "_go_println": lambda *a: " ".join(go_string(x) for x in a) + "\n",
    "_go_slice": lambda v, *i: v[slice(*i)],
    "_go_items": _items,
    "_go_values": _values,
}
