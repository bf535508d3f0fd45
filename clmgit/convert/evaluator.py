"""Go's text/template semantics in Python, for proving a conversion: the same syntax tree that
the emitter turns into Jinja, evaluated as Go evaluates it.

- Truth: false, 0, nil, empty string/list/map are false; everything else true.
- `range` over a map visits its keys in sorted order; over a list, in order; over an int n,
  0..n-1; over nil, nothing (its `else` runs).
- A missing map key fails naming the key (CLM's `missingkey=error`); `index` gives the zero
  value (`""` in a map of strings).
- Printing as Go's fmt prints: `true`/`false`, `<no value>`, floats in Go's shortest form.
- Functions: a table of name → plain Python callable (CLM's library), arguments in Go's order,
  a piped value last. Builtins: and or not eq ne lt le gt ge index len print printf println.
  What convert refuses (`break`, `continue`, the builtins html js urlquery call slice) is never
  in a tree the check renders, so it fails here too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from clmgit.config import gocompat, gofmt
from clmgit.config.clmfuncs import go_index
from clmgit.config.helpers import HelperError
from clmgit.convert import nodes as go
from clmgit.convert.parser import GoTemplateError


def render(parsed: go.Parsed, data: Any, functions: Mapping[str, Callable[..., Any]]) -> str:
    """`parsed` executed with `data` as the dot, the way Go's text/template executes it."""
    state = _State(parsed, functions, [("$", data)])
    state.walk(parsed.nodes, data)
    return "".join(state.out)


class _State:
    """One render. An error ends it, so a scope of variables is left only at its end."""

    def __init__(self, parsed: go.Parsed, functions: Mapping[str, Callable[..., Any]],
                 variables: list[tuple[str, Any]]) -> None:
        self.parsed = parsed
        self.functions = functions
        self.vars = variables
        self.out: list[str] = []
        self.line = 0

    def fail(self, message: str) -> GoTemplateError:
        return GoTemplateError(f"{self.parsed.name}:{self.line}: {message}")

    # statements

    def walk(self, nodes: list[go.Node], dot: Any) -> None:
        for node in nodes:
            self.node(node, dot)

    def block(self, nodes: list[go.Node], dot: Any) -> None:
        """A list with its own variable scope."""
        mark = len(self.vars)
        self.walk(nodes, dot)
        del self.vars[mark:]

    def node(self, node: go.Node, dot: Any) -> None:
        if isinstance(node, go.Text):
            self.out.append(node.text)
        elif isinstance(node, go.Action):
            self.line = node.tag.line
            value = self.pipe(node.pipe, dot)
            if not node.pipe.decl:
                try:
                    self.out.append(gofmt.output_value(value))
                except HelperError as e:
                    raise self.fail(str(e)) from None
        elif isinstance(node, go.Branch):
            self.line = node.tag.line
            if node.kind == "range":
                self.range_(node, dot)
            else:
                self.if_or_with(node, dot)
        elif isinstance(node, go.Template):
            self.line = node.tag.line
            self.template(node.name, None if node.pipe is None else self.pipe(node.pipe, dot))
        elif isinstance(node, go.Define):
            if node.is_block:
                self.line = node.tag.line
                arg = None if node.block_pipe is None else self.pipe(node.block_pipe, dot)
                self.template(node.name, arg)
        elif isinstance(node, go.LoopControl):
            raise self.fail(f"{{{{{node.word}}}}} is not rendered: convert refuses it")
        else:
            assert isinstance(node, go.Comment)

    def if_or_with(self, node: go.Branch, dot: Any) -> None:
        mark = len(self.vars)
        value = self.pipe(node.pipe, dot)
        if truth(value):
            self.block(node.body, value if node.kind == "with" else dot)
        else:
            self.block(node.orelse, dot)
        del self.vars[mark:]

    def range_(self, node: go.Branch, dot: Any) -> None:
        mark = len(self.vars)
        value = self.pipe(node.pipe, dot)
        items = self.range_items(value, len(node.pipe.decl))
        for key, elem in items:
            if node.pipe.decl:
                self.vars[-1] = (self.vars[-1][0], elem)
                if len(node.pipe.decl) == 2:
                    self.vars[-2] = (self.vars[-2][0], key)
            self.block(node.body, elem)
        if not items:
            self.block(node.orelse, dot)
        del self.vars[mark:]

    def range_items(self, value: Any, decls: int) -> list[tuple[Any, Any]]:
        try:
            if decls > 1:
                return gocompat.go_range2(value)
            return gocompat.range_pairs(value)
        except HelperError as e:
            raise self.fail(str(e)) from None

    def template(self, name: str, dot: Any) -> None:
        define = self.parsed.defines.get(name)
        if define is None:
            raise self.fail(f'template "{name}" not defined')
        saved = self.vars
        self.vars = [("$", dot)]
        self.walk(define.body, dot)
        self.vars = saved

    # pipelines

    def pipe(self, pipe: go.Pipe, dot: Any) -> Any:
        self.line = pipe.line or self.line
        value: Any = _NOT_PIPED
        for command in pipe.commands:
            value = self.command(command, dot, value)
        for name in pipe.decl:
            if pipe.assign:
                self.set_var(name, value)
            else:
                self.vars.append((name, value))
        return value

    def set_var(self, name: str, value: Any) -> None:
        for i in range(len(self.vars) - 1, -1, -1):
            if self.vars[i][0] == name:
                self.vars[i] = (name, value)
                return
        raise self.fail(f"undefined variable: {name}")

    def var(self, name: str) -> Any:
        for key, value in reversed(self.vars):
            if key == name:
                return value
        raise self.fail(f"undefined variable: {name}")

    def command(self, command: go.Command, dot: Any, piped: Any) -> Any:
        head, args = command.args[0], list(command.args[1:])
        if isinstance(head, go.Identifier):
            return self.call(head.name, args, dot, piped)
        extra = args + ([] if piped is _NOT_PIPED else [_Value(piped)])
        if isinstance(head, go.Literal) and head.value is None and not extra:
            raise self.fail("nil is not a command")
        if isinstance(head, go.Field | go.Variable | go.Chain):
            return self.fields(self.receiver(head, dot), head.names, extra, dot)
        if extra:
            raise self.fail("can't give argument to non-function")
        return self.operand(head, dot)

    def operand(self, op: go.Operand | _Value, dot: Any) -> Any:
        if isinstance(op, _Value | go.Literal):
            return op.value
        if isinstance(op, go.Dot):
            return dot
        if isinstance(op, go.Field | go.Variable | go.Chain):
            return self.fields(self.receiver(op, dot), op.names, [], dot)
        if isinstance(op, go.SubPipe):
            return self.pipe(op.pipe, dot)
        assert isinstance(op, go.Identifier)
        return self.call(op.name, [], dot, _NOT_PIPED)

    def receiver(self, op: go.Field | go.Variable | go.Chain, dot: Any) -> Any:
        """What the field names of `op` are read from: the dot, a variable, an operand."""
        if isinstance(op, go.Field):
            return dot
        if isinstance(op, go.Variable):
            return self.var(op.name)
        return self.operand(op.operand, dot)

    def fields(self, value: Any, names: tuple[str, ...], args: list[Any], dot: Any) -> Any:
        for i, name in enumerate(names):
            final = i == len(names) - 1
            value = self.field(value, name, args if final else [], dot)
        if not names and args:
            raise self.fail("can't give argument to non-function")
        return value

    def field(self, receiver: Any, name: str, args: list[Any], dot: Any) -> Any:
        if receiver is None:
            raise self.fail(f"nil pointer evaluating interface {{}}.{name}")
        if isinstance(receiver, Mapping):
            if args:
                raise self.fail(f"{name} is not a method but has arguments")
            if name not in receiver:
                raise self.fail(f'map has no entry for key "{name}"')
            return receiver[name]
        attribute = getattr(receiver, name, _MISSING)
        if attribute is _MISSING or name.startswith("_") or isinstance(receiver, _BASIC):
            raise self.fail(f"can't evaluate field {name} in type {type(receiver).__name__}")
        if callable(attribute):
            return self.invoke(name, attribute, self.arguments(name, args, dot))
        if args:
            raise self.fail(f"{name} is not a method but has arguments")
        return attribute

    def invoke(self, name: str, function: Callable[..., Any], args: list[Any]) -> Any:
        try:
            return function(*args)
        except GoTemplateError:
            raise
        except Exception as e:  # noqa: BLE001 - a function's failure is the template's error
            raise self.fail(f"error calling {name}: {e}") from None

    def call(self, name: str, args: list[go.Operand], dot: Any, piped: Any) -> Any:
        extra = [] if piped is _NOT_PIPED else [_Value(piped)]
        operands: list[go.Operand | _Value] = [*args, *extra]
        if name in ("and", "or"):
            return self.and_or(name, operands, dot)
        builtin = _BUILTINS.get(name)
        function = builtin or self.functions.get(name)
        if function is None:
            raise self.fail(f'function "{name}" not defined')
        values = self.arguments(name, operands, dot)
        if builtin is not None:
            try:
                return builtin(*values)
            except HelperError as e:
                raise self.fail(f"error calling {name}: {e}") from None
            except TypeError:
                raise self.fail(f"wrong number of args for {name}: got {len(values)}") from None
        return self.invoke(name, function, values)

    def arguments(self, name: str, operands: list[go.Operand | _Value], dot: Any) -> list[Any]:
        """The operands' values, passed to `name` as Go passes them (`gocompat.GO_PARAMS`)."""
        values = [self.operand(a, dot) for a in operands]
        params = gocompat.GO_PARAMS.get(name, ())
        try:
            return [value if i >= len(params) else
                    gocompat.go_const(value, params[i]) if isinstance(op, go.Literal) else
                    gocompat.go_typed(value, params[i])
                    for i, (op, value) in enumerate(zip(operands, values, strict=True))]
        except HelperError as e:
            raise self.fail(str(e)) from None

    def and_or(self, name: str, operands: list[go.Operand | _Value], dot: Any) -> Any:
        if not operands:
            raise self.fail(f"wrong number of args for {name}: want at least 1 got 0")
        value: Any = None
        for op in operands:
            value = self.operand(op, dot)
            if truth(value) == (name == "or"):
                return value
        return value


class _Value:
    """A value already computed (the piped one) among operands."""

    def __init__(self, value: Any) -> None:
        self.value = value


_NOT_PIPED = object()
_MISSING = object()


def truth(value: Any) -> bool:
    """Go's truth: zero values (nil too) and empty containers are false."""
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 - an object without a notion of empty is a struct: true
        return True


#: Go values with no fields or methods a template can read.
_BASIC = (str, bytes, int, float, list, tuple)


_BUILTINS: dict[str, Callable[..., Any]] = {
    "not": lambda value: not truth(value),
    "eq": gocompat.go_eq,
    "ne": gocompat.go_ne,
    "lt": gocompat.go_lt,
    "le": gocompat.go_le,
    "gt": gocompat.go_gt,
    "ge": gocompat.go_ge,
    "index": go_index,
    "len": gocompat.go_len,
    "print": gocompat.go_print,
    "println": gocompat.go_println,
    "printf": gocompat.go_printf,
}
