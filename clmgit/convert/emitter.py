"""Jinja2 from a parsed Go template, whitespace kept byte for byte, rendering as Go renders.

Go's data is the template's dot: at the top it holds `Cluster`, `Values` and `NodePool` (CLM's
template data), which become Jinja variables of those names. Inside `range`/`with` the dot is a
generated variable (`_dot1`, ...); `define` becomes a macro taking the dot. Generated names
start with `_`, Go variables never do and keep their names otherwise (renamed where Jinja would
see a clash with a word, a global or another variable); a variable that is assigned with `=`
becomes a `namespace` so that a loop can change it, as Go allows.

Where Jinja's operators or printing would differ from Go's, the Jinja calls Go's builtins
(`clmgit.config.gocompat`): printing of values that may not be strings, `print`/`printf`,
comparisons of operands whose kinds it cannot tell (`kinds`), `range`, `len`, fields named like
Python attributes.

Trim markers stay where Jinja trims exactly as Go does (Go trims spaces, tabs and newlines; Jinja
any white space); elsewhere the text is written already trimmed. What Jinja cannot express or
clmgit would print otherwise than Go (`break`/`continue`, `html`, a `printf` directive outside
`gofmt`'s, ...) is refused with file, line and the construct.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from types import EllipsisType

from clmgit.config.clmfuncs import NAMES as CLM_NAMES
from clmgit.config.gocompat import GO_COMPAT, GO_OUT, GO_PARAMS
from clmgit.config.gofmt import check_format
from clmgit.config.helpers import HELPERS
from clmgit.convert import nodes as go
from clmgit.convert.kinds import (
    BOOL,
    INT,
    ITEMS,
    PLAIN,
    STRING,
    call_kind,
    field_kind,
    literal_kind,
)
from clmgit.convert.parser import GO_SPACE, GoTemplateError

ROOT_FIELDS = ("Cluster", "Values", "NodePool")  # CLM's template data
#: Names a Go variable may not take in Jinja: Jinja's words and globals, CLM's functions and the
#: helpers (a variable `$index` would hide `index`), the data's variables.
_RESERVED = frozenset({"and", "or", "not", "in", "is", "if", "else", "true", "false", "none",
                       "True", "False", "None", "loop", "namespace", "range", "dict", "self",
                       "caller", "varargs", "kwargs", "lipsum", "cycler", "joiner", "index",
                       *ROOT_FIELDS, *CLM_NAMES, *HELPERS, *GO_COMPAT})
#: Field names that Jinja would read as a Python attribute (`dict.values`, `str.upper`, ...)
#: rather than as the map key Go reads: written as a call of `go_field`.
_PY_ATTRIBUTES = frozenset(name for t in (dict, str, list, tuple, int, float, bytes)
                           for name in dir(t))
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_REFUSED = frozenset({"html", "js", "urlquery", "call", "slice"})
_BRACE_RE = re.compile(r"\{(?=[{%#]|$)")


class Refused(GoTemplateError):
    """A construct that the Jinja output cannot express."""


@dataclass
class Usage:
    """What a converted file used: constructs and functions, with counts."""

    constructs: Counter[str] = field(default_factory=Counter)
    functions: Counter[str] = field(default_factory=Counter)


@dataclass
class _Scope:
    names: dict[str, str]  # Go variable → Jinja expression
    dot: str | None  # the Jinja expression of the dot; None: the root


# Generated names start with "_" and user variables never do (`bind` renames them), so that
# neither can take the other's name.
def _generated(base: str, n: int) -> str:
    return f"_{base}{n}"


def to_jinja(parsed: go.Parsed, usage: Usage | None = None) -> str:
    """The Jinja2 text of a parsed Go template."""
    return _Emitter(parsed, usage or Usage()).emit()


class _Emitter:
    def __init__(self, parsed: go.Parsed, usage: Usage) -> None:
        self.parsed = parsed
        self.usage = usage
        self.out: list[str] = []
        self.scopes: list[_Scope] = [_Scope({}, None)]
        self.taken: set[str] = set()
        self.counter = 0
        self.assigned = _assigned_names(parsed.nodes)
        self.kinds: dict[str, str] = {}  # Jinja expression → its kind, where known (`kinds`)

    def emit(self) -> str:
        # Go's defines are known before the template runs; a Jinja macro only after its
        # definition: every define goes first (it prints nothing where it stood).
        nodes = self.parsed.nodes
        for node in nodes:
            if isinstance(node, go.Define):
                self.define(node)
        for i, node in enumerate(nodes):
            if isinstance(node, go.Define):
                if node.is_block:
                    self.template(node.tag, node.name, node.block_pipe, counted=False,
                                  trim_right=node.end_tag.trim_right)
                continue
            if isinstance(node, go.Text):
                before = nodes[i - 1] if i else None
                after = nodes[i + 1] if i + 1 < len(nodes) else None
                self.text(node, trimmed_left=isinstance(before, go.Define),
                          trimmed_right=isinstance(after, go.Define))
                continue
            self.node(node)
        return "".join(self.out)

    def refuse(self, line: int, construct: str) -> Refused:
        return Refused(f"{self.parsed.name}:{line}: {construct} cannot be converted to Jinja")

    # statements

    def nodes(self, nodes: list[go.Node]) -> None:
        for node in nodes:
            self.node(node)

    def node(self, node: go.Node) -> None:
        if isinstance(node, go.Text):
            self.text(node)
        elif isinstance(node, go.Comment):
            self.usage.constructs["comment"] += 1
            body = node.text.replace("#}", "# }")
            self.out.append(self._tag("{#", node.tag.trim_left, body, "#}", node.tag.trim_right,
                                      pad=""))
        elif isinstance(node, go.Action):
            self.action(node)
        elif isinstance(node, go.Branch):
            self.branch(node)
        elif isinstance(node, go.Define):
            self.define(node)
        elif isinstance(node, go.Template):
            self.template(node.tag, node.name, node.pipe)
        elif isinstance(node, go.LoopControl):
            raise self.refuse(node.tag.line, f"{{{{{node.word}}}}}")

    def text(self, node: go.Text, *, trimmed_left: bool = False,
             trimmed_right: bool = False) -> None:
        # A marker stays Jinja's job only where Jinja (any white space) trims what Go (spaces,
        # tabs, newlines) trims; otherwise the text is written trimmed and the marker dropped.
        # Beside a define (moved to the top) the text is written as Go trims it.
        text = node.raw
        beside_define = trimmed_left  # the tag before was moved away: no marker to drop
        if "\r" in text:  # Jinja reads \r\n and \r as \n: carriage returns are expressions
            trimmed_left = trimmed_right = True
        if node.trim_left and (trimmed_left or text.lstrip() != text.lstrip(GO_SPACE)):
            text = text.lstrip(GO_SPACE)
            if not beside_define:
                self._drop_right_marker()
        if node.trim_right and (trimmed_right or text.rstrip() != text.rstrip(GO_SPACE)):
            text = text.rstrip(GO_SPACE)
            self._pending_no_left_trim = True
        self.out.append(_escape_text(text))

    _pending_no_left_trim = False

    def _drop_right_marker(self) -> None:
        """The tag just written keeps no right trim marker: the text after it is trimmed."""
        chunk = self.out[-1] if self.out else ""
        for end in ("-}}", "-%}", "-#}"):
            if chunk.endswith(end):
                self.out[-1] = chunk[:-3] + end[1:]
                return

    def _open(self, tag: go.Tag, body: str) -> str:
        return self._tag("{%", tag.trim_left, body, "%}", tag.trim_right)

    def _tag(self, start: str, trim_left: bool, body: str, end: str, trim_right: bool, *,
             pad: str = " ") -> str:
        left = "-" if trim_left and not self._pending_no_left_trim else ""
        self._pending_no_left_trim = False
        return f"{start}{left}{pad}{body}{pad}{'-' if trim_right else ''}{end}"

    def action(self, node: go.Action) -> None:
        pipe = node.pipe
        if pipe.decl:
            self.out.append(self._open(node.tag, self.declare(pipe)))
            return
        self.usage.constructs["output"] += 1
        value = self.pipe(pipe)
        if value == self.root():
            raise self.refuse(node.tag.line, "printing the template's data")
        if self.kinds.get(value) not in PLAIN:  # Go's printing of lists, maps, floats, nil
            value = f"{value}|{GO_OUT}" if value.startswith("(") else f"({value})|{GO_OUT}"
        self.out.append(self._tag("{{", node.tag.trim_left, value, "}}", node.tag.trim_right))

    def declare(self, pipe: go.Pipe, value: str | None = None) -> str:
        """`set` for `$x := pipe` or `$x = pipe` (without its tag)."""
        value = value if value is not None else self.pipe(pipe)
        (name,) = pipe.decl
        if pipe.assign:
            self.usage.constructs["assignment"] += 1
            return f"set {self.lookup(name, pipe.line)} = {value}"
        self.usage.constructs["variable"] += 1
        kind = self.kinds.get(value)
        jinja = self.bind(name)
        if name in self.assigned:
            self.scopes[-1].names[name] = f"{jinja}.v"
            return f"set {jinja} = namespace(v={value})"
        if kind is not None:
            self.kinds[jinja] = kind
        return f"set {jinja} = {value}"

    def bind(self, name: str) -> str:
        """A Jinja name for Go variable `name`: its own where free, never a generated name
        (those start with `_`), a global's or Jinja's word."""
        base = name[1:] or "root"
        if base.startswith("_"):
            base = "u" + base
        jinja = base if base not in _RESERVED else f"{base}_"
        n = 1
        while jinja in self.taken:
            n += 1
            jinja = f"{base}_{n}"
        self.taken.add(jinja)
        self.scopes[-1].names[name] = jinja
        return jinja

    def lookup(self, name: str, line: int) -> str:
        for scope in reversed(self.scopes):
            if name in scope.names:
                return scope.names[name]
        if name == "$":
            return self.root()
        raise GoTemplateError(f"{self.parsed.name}:{line}: undefined variable {name}")

    def root(self) -> str:
        fields = ", ".join(f"{f!r}: {f}" for f in ROOT_FIELDS)
        return "{" + fields + "}"

    def push(self, dot: str | None | EllipsisType = ...) -> None:
        current = self.scopes[-1].dot
        self.scopes.append(_Scope({}, current if dot is ... else dot))

    def branch(self, node: go.Branch) -> None:
        self.usage.constructs[node.kind] += 1
        if node.kind == "range":
            self.range_(node)
        else:
            self.if_or_with(node, "if")
        if not node.chained:
            assert node.end_tag is not None
            word = "endfor" if node.kind == "range" else "endif"
            self.out.append(self._open(node.end_tag, word))

    def if_or_with(self, node: go.Branch, word: str) -> None:
        pipe = node.pipe
        if node.kind == "with":
            self.counter += 1
            dot = _generated("dot", self.counter)
            value = self.pipe(pipe)
            self.push(dot)
            if pipe.decl:
                name = self.bind(pipe.decl[0])
                self.scopes[-1].names[pipe.decl[0]] = name
                self.scopes[-1].dot = name
                dot = name
            # `with` is never chained here: `orelse` refuses `{{else with}}`.
            self.out.append(self._tag("{%", node.tag.trim_left, f"set {dot} = {value}", "%}",
                                      False)
                            + self._tag("{%", False, f"if {dot}", "%}", node.tag.trim_right))
        else:
            self.push()
            if pipe.decl:
                self.out.append(self._tag("{%", node.tag.trim_left, self.declare(pipe), "%}",
                                          False))
                condition = self.lookup(pipe.decl[0], pipe.line)
                self.out.append(self._tag("{%", False, f"{word} {condition}", "%}",
                                          node.tag.trim_right))
            else:
                self.out.append(self._open(node.tag, f"{word} {self.pipe(pipe)}"))
        self.nodes(node.body)
        self.scopes.pop()
        self.orelse(node)

    def orelse(self, node: go.Branch) -> None:
        if node.else_tag is None:
            return
        first = node.orelse[0] if node.orelse else None
        if isinstance(first, go.Branch) and first.chained:
            if first.kind == "with":
                raise self.refuse(node.else_tag.line, "{{else with}}")
            self.usage.constructs["else if"] += 1
            self.if_or_with(first, "elif")
            return
        self.out.append(self._open(node.else_tag, "else"))
        self.push()
        self.nodes(node.orelse)
        self.scopes.pop()

    def range_(self, node: go.Branch) -> None:
        # What Go visits (maps in sorted key order, an integer's 0..n-1, nothing for nil) is
        # `go_range`'s to tell: Jinja's `for` would walk a map's keys or a string's characters.
        pipe = node.pipe
        self.counter += 1
        value = self.pipe(pipe)
        self.push()
        names = [self.bind(n) for n in pipe.decl]
        if len(names) == 2:
            elem = names[1]
            loop = f"for {names[0]}, {elem} in go_range2({value})"
        else:
            elem = names[0] if names else _generated("dot", self.counter)
            loop = f"for {elem} in go_range({value})"
        self.scopes[-1].dot = elem
        self.out.append(self._tag("{%", node.tag.trim_left, loop, "%}", node.tag.trim_right))
        self.nodes(node.body)
        self.scopes.pop()
        if node.else_tag is not None:
            self.out.append(self._open(node.else_tag, "else"))
            self.push()
            self.nodes(node.orelse)
            self.scopes.pop()

    def define(self, node: go.Define) -> None:
        self.usage.constructs["block" if node.is_block else "define"] += 1
        name = _macro_name(node.name)
        saved = self.scopes
        self.scopes = [_Scope({"$": "_dot"}, "_dot")]
        self.out.append(self._open(node.tag, f"macro {name}(_dot)"))
        self.nodes(node.body)
        self.out.append(self._open(node.end_tag, "endmacro"))
        self.scopes = saved

    def template(self, tag: go.Tag, name: str, pipe: go.Pipe | None, *, counted: bool = True,
                 trim_right: bool | None = None) -> None:
        if counted:
            self.usage.constructs["template"] += 1
        # Every define is a macro at the top (`emit`), so a call may come before its define, as
        # in Go; a name with no define fails when called, as Go's `template` does.
        arg = self.pipe(pipe) if pipe is not None else "none"
        right = tag.trim_right if trim_right is None else trim_right
        self.out.append(self._tag("{{", tag.trim_left, f"{_macro_name(name)}({arg})", "}}", right))

    # expressions

    def pipe(self, pipe: go.Pipe) -> str:
        value: str | None = None
        for command in pipe.commands:
            value = self.command(command, value, pipe.line)
        assert value is not None
        return value

    def command(self, command: go.Command, piped: str | None, line: int) -> str:
        head, args = command.args[0], list(command.args[1:])
        if isinstance(head, go.Identifier):
            values = self.arguments(head.name, args, piped, line)
            return self.call(head.name, values, line)
        if isinstance(head, go.Literal) and head.value is None and not args and piped is None:
            raise self.refuse(line, "nil as a command (Go fails on it)")
        if args or piped is not None:
            if isinstance(head, go.Field | go.Chain | go.Variable) and head.names:
                values = self.arguments(head.names[-1], args, piped, line)
                self.usage.constructs["method call"] += 1
                return f"{self.operand(head, line)}({', '.join(values)})"
            raise self.refuse(line, "a value with arguments")
        return self.operand(head, line)

    def arguments(self, name: str, args: list[go.Operand], piped: str | None,
                  line: int) -> list[str]:
        """The arguments of a call of `name`, the piped value last; where Go's rules for an
        argument are not Python's (`GO_PARAMS`), each goes through `go_const` (a constant) or
        `go_typed` (any other value, the piped one too)."""
        values = [(self.operand(a, line), isinstance(a, go.Literal)) for a in args]
        if piped is not None:
            values.append((piped, False))
        params = GO_PARAMS.get(name, ())
        return [value if i >= len(params) or params[i] is None else
                f'{"go_const" if constant else "go_typed"}({value}, "{params[i]}")'
                for i, (value, constant) in enumerate(values)]

    def call(self, name: str, values: list[str], line: int) -> str:
        self.usage.functions[name] += 1
        result = self._call(name, values, line)
        kind = call_kind(name, [self.kinds.get(v) for v in values])
        if kind is not None:
            self.kinds[result] = kind
        return result

    def _call(self, name: str, values: list[str], line: int) -> str:
        if name in ("and", "or"):
            return "(" + f" {name} ".join(values) + ")"
        if name == "not":
            return f"(not {values[0]})"
        if name in _COMPARE:
            return self.compare(name, values)
        if name == "len" and len(values) == 1:
            if self.kinds.get(values[0]) == ITEMS:
                return f"({values[0]}|length)"
            return f"go_len({values[0]})"  # Go counts a string's bytes; no length of a struct
        if name == "printf":
            self.check_printf(values, line)
        if name in ("print", "printf", "println"):
            return f"go_{name}({', '.join(values)})"
        if name in _REFUSED:
            raise self.refuse(line, f"the builtin {name}")
        return f"{name}({', '.join(values)})"

    def compare(self, name: str, values: list[str]) -> str:
        """Jinja's operator where both sides are of one kind Python compares as Go does, else
        Go's builtin (which fails on an int against a string, a list, ...)."""
        kinds = {self.kinds.get(v) for v in values}
        fast = (STRING, INT, BOOL) if name in ("eq", "ne") else (STRING, INT)
        if len(values) == 2 and len(kinds) == 1 and kinds <= set(fast):
            return f"({values[0]} {_COMPARE[name]} {values[1]})"
        return f"go_{name}({', '.join(values)})"

    def check_printf(self, values: list[str], line: int) -> None:
        """A constant format whose every directive prints as Go prints it (`gofmt`)."""
        form = values[0] if values else ""
        if self.kinds.get(form) != STRING or not form.startswith('"'):
            raise self.refuse(line, "printf with a format that is not a string constant")
        reason = check_format(str(ast.literal_eval(form)))  # the text `_string` wrote
        if reason is not None:
            raise self.refuse(line, f"printf with {reason}")

    def operand(self, op: go.Operand, line: int) -> str:
        if isinstance(op, go.Literal):
            return self._known(_literal(op), literal_kind(op.value))
        if isinstance(op, go.Dot):
            return self.dot()
        if isinstance(op, go.Field):
            dot = self.scopes[-1].dot
            if dot is None:
                self.usage.constructs["field"] += 1
                return self._known(_fields(op.names[0], op.names[1:]), field_kind(op.names))
            return _fields(dot, op.names)
        if isinstance(op, go.Variable):
            if op.name == "$" and op.names and not any("$" in s.names for s in self.scopes):
                return self._known(_fields(op.names[0], op.names[1:]), field_kind(op.names))
            variable = self.lookup(op.name, line)
            if not op.names:
                return variable
            return _fields(variable, op.names)
        if isinstance(op, go.Chain):
            return _fields(f"({self.operand(op.operand, line)})", op.names)
        if isinstance(op, go.SubPipe):
            inner = self.pipe(op.pipe)
            return self._known(f"({inner})", self.kinds.get(inner))
        if isinstance(op, go.Identifier):
            return self.call(op.name, [], line)
        raise AssertionError(op)

    def _known(self, expression: str, kind: str | None) -> str:
        if kind is not None:
            self.kinds[expression] = kind
        return expression

    def dot(self) -> str:
        dot = self.scopes[-1].dot
        return self.root() if dot is None else dot


def _fields(base: str, names: tuple[str, ...]) -> str:
    """`base.a.b` in Jinja; a name Python objects have an attribute of is read as Go reads it."""
    for name in names:
        base = f'go_field({base}, "{name}")' if name in _PY_ATTRIBUTES else f"{base}.{name}"
    return base


def _macro_name(name: str) -> str:
    """A Jinja name for a define, one per name (`a-b` and `a_b` stay two): `_` doubled, any
    other character that is not a letter or digit as `_<hex>_`."""
    return "_tpl_" + "".join(c if c.isascii() and c.isalnum() else "__" if c == "_"
                             else f"_{ord(c):x}_" for c in name)


def _literal(op: go.Literal) -> str:
    value = op.value
    if value is None:
        return "none"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return _string(str(value))


def _string(value: str) -> str:
    out = ['"']
    for c in value:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 32 or ord(c) == 127:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _escape_text(text: str) -> str:
    """Text with every `{` that Jinja would read as the start of a tag written as an expression."""
    return _BRACE_RE.sub("{{ '{' }}", text).replace("\r", "{{ '\\r' }}")


def _assigned_names(nodes: list[go.Node]) -> set[str]:
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, go.Action) and node.pipe.assign:
            found.update(node.pipe.decl)
        if isinstance(node, go.Branch):
            found |= _assigned_names(node.body) | _assigned_names(node.orelse)
        if isinstance(node, go.Define):
            found |= _assigned_names(node.body)
    return found
