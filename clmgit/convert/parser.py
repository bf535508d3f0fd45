"""A parser of Go's text/template language, written for this project (no Python library reads
it): actions, pipelines, variables, `if/else if/else`, `range` (one or two variables, `else`),
`with` (`else with`), `define`/`template`/`block`, `break`/`continue`, comments, trim markers,
raw strings, character and number constants. Errors name the file and line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from clmgit.convert.nodes import (
    Action,
    Branch,
    Chain,
    Command,
    Comment,
    Define,
    Dot,
    Field,
    Identifier,
    Literal,
    LoopControl,
    Node,
    Operand,
    Parsed,
    Pipe,
    SubPipe,
    Tag,
    Template,
    Text,
    Variable,
)
from clmgit.errors import ClmgitError

GO_SPACE = " \t\r\n"
KEYWORDS = frozenset({"if", "else", "end", "range", "with", "define", "template", "block",
                      "break", "continue"})

_TOKEN_RE = re.compile(r"""
    (?P<space>[ \t\r\n]+)
  | (?P<close>-?}})
  | (?P<declare>:=)
  | (?P<assign>=)
  | (?P<punct>[|(),])
  | (?P<raw>`[^`]*`)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<char>'(?:[^'\\\n]|\\.[^']*)')
  | (?P<number>(?=[+-]|\.?[0-9])[+-]?(?:0[xX][0-9a-fA-F_]*(?:\.[0-9a-fA-F_]*)?
          (?:[pP][+-]?[0-9_]*)?
        |0[oO][0-7_]*(?:\.[0-7_]*)?|0[bB][01_]*(?:\.[01_]*)?
        |[0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9_]*)?)i?[A-Za-z0-9_]?)
  | (?P<variable>\$\w*)
  | (?P<field>\.[A-Za-z_]\w*)
  | (?P<dot>\.)
  | (?P<word>[A-Za-z_]\w*)
""", re.VERBOSE)


class GoTemplateError(ClmgitError):
    """A Go template cannot be parsed, converted or evaluated; the message names file and line."""


@dataclass
class _Token:
    kind: str
    text: str
    spaced: bool  # whitespace before it


@dataclass
class _Item:
    tag: Tag
    tokens: list[_Token]
    comment: str | None = None


def parse(source: str, name: str = "template") -> Parsed:
    """The syntax tree of `source`; `name` (a path) appears in errors."""
    items = _split(source, name)
    parser = _Parser(items, name)
    nodes = parser.statements(top=True)
    return Parsed(name, nodes, parser.defines)


def _split(source: str, name: str) -> list[Text | _Item]:
    """Text and actions, the trim markers applied to the text."""
    out: list[Text | _Item] = []
    pos, line = 0, 1
    while True:
        start = source.find("{{", pos)
        if start < 0:
            out.append(Text(source[pos:], source[pos:]))
            break
        out.append(Text(source[pos:start], source[pos:start]))
        line += source.count("\n", pos, start)
        item, end = _action(source, start, line, name)
        out.append(item)
        line += source.count("\n", start, end)
        pos = end
    _apply_trims(out)
    return out


def _action(source: str, start: int, line: int, name: str) -> tuple[_Item, int]:
    pos = start + 2
    trim_left = source[pos:pos + 1] == "-" and source[pos + 1:pos + 2] in tuple(GO_SPACE)
    if trim_left:
        pos += 2
    comment = re.match(r"[ \t\r\n]*/\*(.*?)\*/( -)?}}", source[pos:], re.DOTALL)
    if comment:
        tag = Tag(line, trim_left, bool(comment.group(2)))
        return _Item(tag, [], comment.group(1)), pos + comment.end()
    tokens: list[_Token] = []
    spaced = trim_left
    while True:
        m = _TOKEN_RE.match(source, pos)
        if m is None:
            snippet = source[pos:pos + 10].split("\n")[0]
            raise GoTemplateError(f"{name}:{line}: unexpected {snippet!r} in action")
        kind = m.lastgroup or ""
        pos = m.end()
        if kind == "space":
            spaced = True
            continue
        if kind == "close":
            trim_right = m.group().startswith("-")
            if trim_right and not spaced:
                raise GoTemplateError(f"{name}:{line}: a trim marker needs a space before it")
            return _Item(Tag(line, trim_left, trim_right), tokens), pos
        tokens.append(_Token(kind, m.group(), spaced))
        spaced = False


def _apply_trims(items: list[Text | _Item]) -> None:
    for i, item in enumerate(items):
        if not isinstance(item, Text):
            continue
        before = items[i - 1] if i else None
        after = items[i + 1] if i + 1 < len(items) else None
        if isinstance(before, _Item) and before.tag.trim_right:
            item.trim_left = True
            item.text = item.text.lstrip(GO_SPACE)
        if isinstance(after, _Item) and after.tag.trim_left:
            item.trim_right = True
            item.text = item.text.rstrip(GO_SPACE)


class _Parser:
    def __init__(self, items: list[Text | _Item], name: str) -> None:
        self.items = items
        self.pos = 0
        self.name = name
        self.defines: dict[str, Define] = {}

    def fail(self, line: int, message: str) -> GoTemplateError:
        return GoTemplateError(f"{self.name}:{line}: {message}")

    def statements(self, *, top: bool = False) -> list[Node]:
        """Nodes up to (not including) an `else` or `end`, which the caller takes."""
        nodes: list[Node] = []
        while self.pos < len(self.items):
            item = self.items[self.pos]
            if isinstance(item, Text):
                self.pos += 1
                if item.raw:
                    nodes.append(item)
                continue
            if item.comment is not None:
                self.pos += 1
                nodes.append(Comment(item.tag, item.comment))
                continue
            word = _keyword(item)
            if word in ("else", "end"):
                if top:
                    raise self.fail(item.tag.line, f"unexpected {{{{{word}}}}}")
                return nodes
            self.pos += 1
            node = self.statement(item, word)
            if node is not None:
                nodes.append(node)
        if not top:
            raise self.fail(self._last_line(), "unexpected end of file: an {{end}} is missing")
        return nodes

    def _last_line(self) -> int:
        for item in reversed(self.items):
            if isinstance(item, _Item):
                return item.tag.line
        return 1

    def statement(self, item: _Item, word: str | None) -> Node | None:
        tokens, tag = item.tokens, item.tag
        if word in ("if", "range", "with"):
            return self.branch(word, tag, tokens[1:])
        if word in ("break", "continue"):
            if len(tokens) != 1:
                raise self.fail(tag.line, f"{word} takes no arguments")
            return LoopControl(tag, word)
        if word == "template":
            name, pipe = self.template_args(tag, tokens[1:], word)
            return Template(tag, name, pipe)
        if word in ("define", "block"):
            return self.define(tag, tokens[1:], word)
        return Action(tag, self.pipe(tokens, tag.line, decl_ok=True))  # `pipe` refuses {{ }}

    def branch(self, kind: str, tag: Tag, tokens: list[_Token], *,
               chained: bool = False) -> Branch:
        pipe = self.pipe(tokens, tag.line, decl_ok=True, range_decl=kind == "range")
        node = Branch(kind, tag, pipe, self.statements(), chained=chained)
        closing = self.items[self.pos]
        assert isinstance(closing, _Item)
        self.pos += 1
        if _keyword(closing) == "else":
            node.else_tag = closing.tag
            rest = closing.tokens[1:]
            if rest:  # else if / else with: a chained branch sharing the {{end}}
                inner = _keyword_of(rest[0])
                if inner not in ("if", "with"):
                    raise self.fail(closing.tag.line, "else may only be followed by if or with")
                node.orelse = [self.branch(inner or "", closing.tag, rest[1:], chained=True)]
                end = node.orelse[0]
                assert isinstance(end, Branch)
                node.end_tag = end.end_tag
                return node
            node.orelse = self.statements()
            closing = self.items[self.pos]
            assert isinstance(closing, _Item)
            self.pos += 1
            if _keyword(closing) != "end":
                raise self.fail(closing.tag.line, f"expected {{{{end}}}} of {kind}")
        if closing.tokens[1:]:
            raise self.fail(closing.tag.line, "{{end}} takes no arguments")
        node.end_tag = closing.tag
        return node

    def template_args(self, tag: Tag, tokens: list[_Token], word: str) -> tuple[str, Pipe | None]:
        if not tokens or tokens[0].kind not in ("string", "raw"):
            raise self.fail(tag.line, f"{word} needs a quoted name")
        name = str(_literal(tokens[0], self.name, tag.line).value)
        pipe = self.pipe(tokens[1:], tag.line) if tokens[1:] else None
        return name, pipe

    def define(self, tag: Tag, tokens: list[_Token], word: str) -> Define | None:
        name, pipe = self.template_args(tag, tokens, word)
        if word == "define" and pipe is not None:
            raise self.fail(tag.line, "define takes only a name")
        body = self.statements()
        closing = self.items[self.pos]
        assert isinstance(closing, _Item)
        self.pos += 1
        if _keyword(closing) != "end" or closing.tokens[1:]:
            raise self.fail(closing.tag.line, f"expected {{{{end}}}} of {word}")
        node = Define(tag, name, body, closing.tag, pipe, word == "block")
        if name in self.defines and any(not (isinstance(n, Text) and not n.raw.strip())
                                        for n in self.defines[name].body):
            raise self.fail(tag.line, f"template {name!r} is defined twice")
        self.defines[name] = node
        return node

    def pipe(self, tokens: list[_Token], line: int, *, decl_ok: bool = False,
             range_decl: bool = False) -> Pipe:
        decl, assign, rest = self._decl(tokens, line, range_decl=range_decl)
        if decl and not decl_ok:
            raise self.fail(line, "variables cannot be declared here")
        commands: list[Command] = []
        args: list[Operand] = []
        i = 0
        while i < len(rest):
            tok = rest[i]
            if tok.text == "|":
                if not args:
                    raise self.fail(line, "missing command before |")
                commands.append(Command(tuple(args)))
                args = []
                i += 1
                continue
            operand, i = self.operand(rest, i, line)
            args.append(operand)
        if not args:
            raise self.fail(line, "missing value for command")
        commands.append(Command(tuple(args)))
        for command in commands[1:]:
            if isinstance(command.args[0], Literal):
                raise self.fail(line, "a pipeline stage must be a function or method, not a value")
        return Pipe(tuple(commands), decl, assign, line)

    def _decl(self, tokens: list[_Token], line: int, *,
              range_decl: bool) -> tuple[tuple[str, ...], bool, list[_Token]]:
        for j, tok in enumerate(tokens):
            if tok.kind in ("declare", "assign"):
                names = [t for t in tokens[:j] if t.text != ","]
                commas = [t for t in tokens[:j] if t.text == ","]
                if (not names or any(t.kind != "variable" for t in names)
                        or len(commas) != len(names) - 1 or len(names) > (2 if range_decl else 1)):
                    raise self.fail(line, "bad variable declaration")
                return tuple(t.text for t in names), tok.kind == "assign", tokens[j + 1:]
            if tok.kind not in ("variable",) and tok.text != ",":
                break
        return (), False, tokens

    def operand(self, tokens: list[_Token], i: int, line: int) -> tuple[Operand, int]:
        tok = tokens[i]
        i += 1
        term: Operand
        if tok.text == "(":
            depth, j = 1, i
            while j < len(tokens) and depth:
                if tokens[j].kind == "punct":
                    depth += {"(": 1, ")": -1}.get(tokens[j].text, 0)
                j += 1
            if depth:
                raise self.fail(line, "unclosed left paren")
            term = SubPipe(self.pipe(tokens[i:j - 1], line))
            i = j
        elif tok.kind == "field":
            names, i = _fields(tokens, i)
            return Field((tok.text[1:], *names)), i
        elif tok.kind == "variable":
            names, i = _fields(tokens, i)
            return Variable(tok.text, names), i
        elif tok.kind == "dot":
            term = Dot()
        elif tok.kind == "word":
            if tok.text in ("true", "false"):
                term = Literal(tok.text == "true")
            elif tok.text == "nil":
                term = Literal(None)
            elif tok.text in KEYWORDS:
                raise self.fail(line, f"unexpected {tok.text!r} in command")
            else:
                term = Identifier(tok.text)
        elif tok.kind in ("string", "raw", "char", "number"):
            term = _literal(tok, self.name, line)
        else:
            raise self.fail(line, f"unexpected {tok.text!r} in command")
        names, i = _fields(tokens, i)
        if names:
            if isinstance(term, Literal | Identifier):
                raise self.fail(line, f"cannot take a field of {tok.text!r}")
            term = Chain(term, names)
        return term, i


def _fields(tokens: list[_Token], i: int) -> tuple[tuple[str, ...], int]:
    """The field names chained from `tokens[i]` on (`.A.B` right after a term, no space
    between), and the index after them."""
    names = []
    while i < len(tokens) and tokens[i].kind == "field" and not tokens[i].spaced:
        names.append(tokens[i].text[1:])
        i += 1
    return tuple(names), i


def _keyword(item: _Item) -> str | None:
    return _keyword_of(item.tokens[0]) if item.tokens else None


def _keyword_of(tok: _Token) -> str | None:
    return tok.text if tok.kind == "word" and tok.text in KEYWORDS else None


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            "\\": "\\", "'": "'", '"': '"'}


def _unquote(body: str, name: str, line: int) -> str:
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            out.append(chr(int(body[i + 2:i + 2 + width], 16)))
            i += 2 + width
        elif e in "01234567":
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
        else:
            raise GoTemplateError(f"{name}:{line}: unknown escape \\{e}")
    return "".join(out)


def _literal(tok: _Token, name: str, line: int) -> Literal:
    text = tok.text
    if tok.kind == "raw":
        return Literal(text[1:-1].replace("\r", ""))
    if tok.kind == "string":
        return Literal(_unquote(text[1:-1], name, line))
    if tok.kind == "char":
        value = _unquote(text[1:-1], name, line)
        if len(value) != 1:
            raise GoTemplateError(f"{name}:{line}: bad character constant {text}")
        return Literal(ord(value))
    try:
        return Literal(go_number(text))
    except ValueError as e:
        raise GoTemplateError(f"{name}:{line}: {e}") from None


_INT64 = 2**63


def go_number(text: str) -> int | float:
    """A number constant as Go's template parser reads it and its executor makes it a value: an
    int, or a float64 where the text has a fraction, exponent or binary exponent (`1e2` is
    float64 100, `0x1p4` float64 16). `ValueError` with Go's reason where Go refuses it, and for
    a complex constant (`1i`), which clmgit does not render."""
    if text[-1:].isalnum() and not re.fullmatch(r".*[0-9a-fA-F_.]i?", text):
        raise ValueError(f"bad number syntax: {text!r}")
    if text.endswith("i"):
        if _go_float(text[:-1]) is not None:
            raise ValueError(f"the complex constant {text} is not rendered by clmgit")
        raise ValueError(f"illegal number syntax: {text!r}")
    whole = _go_int(text)
    if whole is not None and -_INT64 <= whole < 2 * _INT64:  # int64 or uint64
        if whole >= _INT64:
            raise ValueError(f"{text} overflows int")
        hex_int = re.match(r"0[xX]", text) is not None and not re.search("[pP]", text)
        return float(whole) if re.search("[.eEpP]", text) and not hex_int else whole
    real = _go_float(text)
    if real is None:
        raise ValueError(f"illegal number syntax: {text!r}")
    if not re.search("[.eEpP]", text):
        raise ValueError(f"integer overflow: {text!r}")
    return real


def _go_int(text: str) -> int | None:
    """Go's `strconv.ParseInt(text, 0, 64)` without the range check: a leading 0 is octal."""
    sign, body = (text[0], text[1:]) if text[:1] in "+-" else ("", text)
    if re.fullmatch(r"0[0-7_]+", body):
        body = "0o" + body[1:]
    try:
        return int(sign + body, 0)
    except ValueError:
        return None


def _go_float(text: str) -> float | None:
    """Go's `strconv.ParseFloat(text, 64)`, None where it fails (a hex mantissa needs a `p`
    exponent; out of range is a failure)."""
    sign, body = (text[0], text[1:]) if text[:1] in "+-" else ("", text)
    try:
        if body[:2] in ("0x", "0X"):
            if not re.fullmatch(r"0[xX](?:_?[0-9a-fA-F])*(?:\.[0-9a-fA-F_]*)?[pP][+-]?[0-9]+",
                                body) or "__" in body:
                return None
            value = float.fromhex(sign + body.replace("_", ""))
        elif re.fullmatch(r"[0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9_]+)?", body):
            value = float(sign + body)
        else:
            return None
    except ValueError:
        return None
    return value if math.isfinite(value) else None
