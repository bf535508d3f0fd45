"""Limits on YAML that clmgit reads from a config repository or a registry: that text is input a
pull request or a record's writer chose, and YAML can make a small file huge.

An alias repeats a node without copying it, so a 2 KB file of nested aliases (an "alias bomb")
composes into a few dozen nodes that stand for billions; whatever walks the data afterwards
(a comparison, a dump, a check of every record) runs out of memory. Every YAML read goes
through `load` or `compose` here, which refuse, in one sentence naming the file:

- a file larger than `MAX_BYTES`;
- more than `MAX_ALIASES` aliases, or aliases that add more than `MAX_ALIAS_NODES` nodes once
  expanded, or an alias inside the node it names (a loop).

The check costs nothing for a file without aliases (it is found by a text search); with them,
one walk of the composed nodes, each counted once.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from clmgit.errors import ConfigError

#: The largest YAML file read (the registry of a large fleet is a few MB).
MAX_BYTES = 32 * 1024 * 1024
#: The most aliases one file may use.
MAX_ALIASES = 10_000
#: The most nodes the aliases of one file may add when expanded.
MAX_ALIAS_NODES = 100_000

# An alias is `*name` at the start of a token; a false match only costs the walk.
_ALIAS = re.compile(r"(?:^|[\s\[{,:?-])\*", re.MULTILINE)
_ALIAS_BYTES = re.compile(rb"(?:^|[\s\[{,:?-])\*", re.MULTILINE)


def check_size(text: str | bytes, name: str) -> None:
    """Refuse a file larger than `MAX_BYTES`."""
    size = len(text.encode() if isinstance(text, str) and len(text) * 4 > MAX_BYTES else text)
    if size > MAX_BYTES:
        raise ConfigError(f"{name} is refused: it is {size:,} bytes, more than the "
                             f"{MAX_BYTES:,} clmgit reads from a YAML file")


def may_alias(text: str | bytes) -> bool:
    """Whether `text` may hold an alias (without one, nothing here can be exceeded)."""
    if isinstance(text, bytes):
        return b"*" in text and _ALIAS_BYTES.search(text) is not None
    return "*" in text and _ALIAS.search(text) is not None


def check_node(node: yaml.Node | None, name: str, *, loops: bool = False) -> None:
    """Refuse a composed document whose aliases exceed the limits (see the module doc); with
    `loops`, an alias inside the node it names counts as one alias (rendered files keep
    PyYAML's recursive data)."""
    if node is None:
        return
    # A walk in document order: a node met again after it was done is an alias's target; one
    # met again while still open contains its own alias.
    sizes: dict[int, int] = {}  # node id -> nodes it stands for, aliases expanded
    stack = [(node, iter(_children(node)))]
    open_, totals, aliases = {id(node)}, [1], 0
    while stack:
        current, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            open_.discard(id(current))
            sizes[id(current)] = size = totals.pop()
            if totals:
                totals[-1] += size
        elif id(child) in open_ and not loops:
            raise ConfigError(f"{name} is refused: a YAML alias refers to a node that "
                                 "contains it (a loop)")
        elif id(child) in sizes or id(child) in open_:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise ConfigError(f"{name} is refused: it uses more than {MAX_ALIASES:,} "
                                     "YAML aliases")
            totals[-1] += sizes.get(id(child), 1)
        else:
            stack.append((child, iter(_children(child))))
            open_.add(id(child))
            totals.append(1)
    expanded = sizes[id(node)] - len(sizes)
    if expanded > MAX_ALIAS_NODES:
        raise ConfigError(
            f"{name} is refused: its YAML aliases expand to {expanded:,} more nodes, more "
            f"than the {MAX_ALIAS_NODES:,} clmgit allows (an alias bomb?)")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def check(text: str | bytes, name: str) -> None:
    """Refuse `text` if it is beyond the limits, before a parser of its own reads it (ruamel's
    round trip); text that is not YAML is left for that parser to word."""
    check_size(text, name)
    if may_alias(text):
        try:
            node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            return
        check_node(node, name)


def compose(text: str | bytes, name: str, loader: Any) -> yaml.Node | None:
    """The node tree of a one-document file, within the limits; `loader` is the Loader class
    (its errors are yaml's, for the caller to word)."""
    check_size(text, name)
    node: yaml.Node | None = yaml.compose(text, Loader=loader)
    if may_alias(text):
        check_node(node, name)
    return node


def load(text: str | bytes, name: str, loader: Any) -> Any:
    """The data of a one-document file, within the limits, constructed by `loader` (a Loader
    class)."""
    check_size(text, name)
    if not may_alias(text):
        return yaml.load(text, Loader=loader)
    reader = loader(text)
    try:
        node = reader.get_single_node()
        if node is None:
            return None
        check_node(node, name)
        return reader.construct_document(node)
    finally:
        reader.dispose()
