"""The config items a CLM tree decides on, and the values it compares them with: what the
check's variants set so that every template renders more than its `if`.

A Go template turns content on with comparisons such as `eq .Cluster.ConfigItems.x "v"`,
`ne (index .NodePool.ConfigItems "y") "w"` or a bare item in `if`/`with`/`and`/`or`/`not`. The
syntax trees the conversion parsed are scanned for those; each item gets the values it is
compared with, and `true`/`false` where it is a condition or compared with `ne` (a value other
than the one named is what turns a `ne` on).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from clmgit.convert import nodes as go

_SCOPES = ("Cluster", "NodePool")  # whose `ConfigItems`
_CONDITIONS = frozenset({"and", "or", "not"})
_OTHER_VALUES = {"true", "false"}
_TESTED = "\0tested"  # in a scan: the item is tested, any value other than a constant may do


@dataclass(frozen=True, order=True)
class Item:
    """A config item as a template reads it: the cluster's or the node pool's."""

    scope: str  # "Cluster" | "NodePool"
    key: str


def compared_items(trees: Iterable[go.Parsed]) -> dict[Item, tuple[str, ...]]:
    """Every config item the templates compare or test, with the values that may turn their
    content on, sorted."""
    found = _scan(trees)
    return {item: tuple(sorted(values - {_TESTED} | (_OTHER_VALUES if _TESTED in values
                                                      else set())))
            for item, values in found.items()}


def compared_values(trees: Iterable[go.Parsed]) -> dict[Item, tuple[str, ...]]:
    """The config items the templates compare with constants (`eq`, `ne`), with those
    constants: values a registry holds for them, unlike `true` for a `labels` tested for
    being set."""
    found = _scan(trees)
    return {item: tuple(sorted(values - {_TESTED})) for item, values in found.items()
            if values - {_TESTED}}


def _scan(trees: Iterable[go.Parsed]) -> dict[Item, set[str]]:
    found: dict[Item, set[str]] = {}
    for tree in trees:
        for pipe, condition in _pipes(tree.nodes, tree.defines.values()):
            _scan_pipe(pipe, found, condition=condition)
    return dict(sorted(found.items()))


def field_items(trees: Iterable[go.Parsed]) -> set[Item]:
    """The config items read as fields (`.Cluster.ConfigItems.x`), which CLM's `missingkey=error`
    requires to exist, unlike an `index`ed one."""
    found: set[Item] = set()
    for tree in trees:
        for pipe, _condition in _pipes(tree.nodes, tree.defines.values()):
            found.update(_fields(pipe))
    return found


def _fields(pipe: go.Pipe) -> Iterator[Item]:
    for command in pipe.commands:
        for arg in command.args:
            if isinstance(arg, go.SubPipe):
                yield from _fields(arg.pipe)
            elif isinstance(arg, go.Field | go.Variable):
                item = _item(arg)
                if item is not None:
                    yield item


def _pipes(nodes: list[go.Node],
           defines: Iterable[go.Define] = ()) -> Iterator[tuple[go.Pipe, bool]]:
    """Every pipe of the nodes, with whether it is a branch's condition."""
    for define in defines:
        yield from _pipes(define.body)
    for node in nodes:
        if isinstance(node, go.Action):
            yield node.pipe, False
        elif isinstance(node, go.Branch):
            yield node.pipe, node.kind != "range"
            yield from _pipes(node.body)
            yield from _pipes(node.orelse)
        elif isinstance(node, go.Template) and node.pipe is not None:
            yield node.pipe, False
        elif isinstance(node, go.Define) and node.block_pipe is not None:
            yield node.block_pipe, False


def _scan_pipe(pipe: go.Pipe, found: dict[Item, set[str]], *, condition: bool) -> None:
    """`condition`: the pipe decides a branch, so an item it reads alone is tested for truth."""
    for command in pipe.commands:
        _scan_command(command, found, condition=condition and len(pipe.commands) == 1)


def _scan_command(command: go.Command, found: dict[Item, set[str]], *, condition: bool) -> None:
    args = command.args
    head = args[0]
    if len(args) == 1:
        item = _item(head)
        if item is not None and condition:
            found.setdefault(item, set()).add(_TESTED)
    elif isinstance(head, go.Identifier):
        _scan_call(head.name, args[1:], found, condition=condition)
    for arg in args:
        if isinstance(arg, go.SubPipe):
            _scan_pipe(arg.pipe, found, condition=False)


def _scan_call(name: str, args: tuple[go.Operand, ...], found: dict[Item, set[str]], *,
               condition: bool) -> None:
    if name in ("eq", "ne"):
        literals = {a.value for a in args
                    if isinstance(a, go.Literal) and isinstance(a.value, str)}
        for item in filter(None, map(_item, args)):
            values = found.setdefault(item, set())
            values.update(literals)
            if name == "ne" or not literals:
                values.add(_TESTED)
    else:
        tested = (list(map(_item, args)) if name in _CONDITIONS else
                  [_indexed(args)] if name == "index" and condition else [])
        for item in filter(None, tested):
            found.setdefault(item, set()).add(_TESTED)


def _item(operand: go.Operand) -> Item | None:
    """The config item an operand reads: `.Cluster.ConfigItems.x`, `$.NodePool.ConfigItems.x`,
    `(index .Cluster.ConfigItems "x")`; a variable followed by `.Cluster` is taken for one that
    holds the root (`$data := .`, as kubernetes-on-aws writes it)."""
    names: tuple[str, ...] = ()
    if isinstance(operand, go.Field | go.Variable):
        names = operand.names
    elif isinstance(operand, go.SubPipe) and len(operand.pipe.commands) == 1:
        args = operand.pipe.commands[0].args
        if isinstance(args[0], go.Identifier) and args[0].name == "index":
            return _indexed(args[1:])
        if len(args) == 1:
            return _item(args[0])
    if len(names) == 3 and names[0] in _SCOPES and names[1] == "ConfigItems":
        return Item(names[0], names[2])
    return None


def _indexed(args: tuple[go.Operand, ...]) -> Item | None:
    """`index .Cluster.ConfigItems "x"`'s item (a constant key only)."""
    if len(args) != 2 or not isinstance(args[1], go.Literal) or not isinstance(args[1].value,
                                                                                 str):
        return None
    target = args[0]
    names = target.names if isinstance(target, go.Field | go.Variable) else ()
    if len(names) == 2 and names[0] in _SCOPES and names[1] == "ConfigItems":
        return Item(names[0], args[1].value)
    return None
