"""The syntax tree of a Go text/template, as `parser` builds it and `emitter`/`evaluator` read it.

Trim markers (`{{-`, `-}}`) are applied to the `Text` nodes by the parser (`text`), the raw text
being kept beside it (`raw`) so that the emitter can keep the markers where Jinja trims alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Text:
    raw: str
    text: str  # after Go's trim markers
    trim_left: bool = False  # the tag before it ends with -}}
    trim_right: bool = False  # the tag after it starts with {{-


@dataclass(frozen=True)
class Tag:
    """Where a tag sits and its trim markers."""

    line: int
    trim_left: bool = False
    trim_right: bool = False


# Operands of a command


@dataclass(frozen=True)
class Field:
    names: tuple[str, ...]  # .A.B → ("A", "B"); a chain on another operand: see Chain


@dataclass(frozen=True)
class Dot:
    pass


@dataclass(frozen=True)
class Variable:
    name: str  # "$" or "$x"
    names: tuple[str, ...] = ()  # $x.A.B


@dataclass(frozen=True)
class Identifier:
    name: str  # a function or builtin


@dataclass(frozen=True)
class Literal:
    value: object  # str, int, float, bool, None (nil)


@dataclass(frozen=True)
class Chain:
    operand: Operand  # (pipe).A.B
    names: tuple[str, ...]


@dataclass(frozen=True)
class SubPipe:
    pipe: Pipe


Operand = Field | Dot | Variable | Identifier | Literal | Chain | SubPipe


@dataclass(frozen=True)
class Command:
    args: tuple[Operand, ...]


@dataclass(frozen=True)
class Pipe:
    commands: tuple[Command, ...]
    decl: tuple[str, ...] = ()  # variables declared ($x := ...) or assigned
    assign: bool = False  # `=` rather than `:=`
    line: int = 0


# Statements


@dataclass
class Action:
    tag: Tag
    pipe: Pipe


@dataclass
class Comment:
    tag: Tag
    text: str


@dataclass
class Branch:
    """if / range / with: `body` when the pipe holds (or per element), else `orelse`."""

    kind: str  # "if" | "range" | "with"
    tag: Tag
    pipe: Pipe
    body: list[Node]
    orelse: list[Node] = field(default_factory=list)
    else_tag: Tag | None = None
    end_tag: Tag | None = None
    chained: bool = False  # reached by `else if` / `else with`: shares its parent's {{ end }}


@dataclass
class Template:
    tag: Tag
    name: str
    pipe: Pipe | None


@dataclass
class Define:
    """`define` (body only) or `block` (define, then call at its place)."""

    tag: Tag
    name: str
    body: list[Node]
    end_tag: Tag
    block_pipe: Pipe | None = None
    is_block: bool = False


@dataclass
class LoopControl:
    tag: Tag
    word: str  # "break" | "continue"


Node = Text | Action | Comment | Branch | Template | Define | LoopControl


@dataclass
class Parsed:
    name: str
    nodes: list[Node]
    defines: dict[str, Define]
