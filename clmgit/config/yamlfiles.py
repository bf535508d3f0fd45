"""YAML of the config repo's rendered files, parsed fast, with errors that name the file and line.

Every cluster's ~450 rendered objects are parsed on every render, so parsing is most of the cost
of a further cluster at a SHA. libyaml parses and composes the node tree; what PyYAML then does in
Python — its general resolver and its constructor, built for every tag, anchor and merge key — is
done here by a lean version of each for the common case: plain mappings, sequences, strings,
numbers, booleans and nulls. The result is the same as `yaml.safe_load`'s: the resolver applies
the same implicit rules (PyYAML's own table), and a document with anything else (an anchor used
twice, a merge key, a timestamp, a custom tag) is built by PyYAML's `SafeConstructor` instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver, Resolver

from clmgit import yamlsafe
from clmgit.errors import ConfigError

try:
    from yaml._yaml import CParser as _Parser
except ImportError:  # PyYAML built without libyaml: its own parser, slower, the same result

    class _Parser(yaml.reader.Reader, yaml.scanner.Scanner,  # type: ignore[no-redef]  # no libyaml
                  yaml.parser.Parser, yaml.composer.Composer):
        def __init__(self, text: str) -> None:
            yaml.reader.Reader.__init__(self, text)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)

_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_TAG + t for t in ("str", "int", "float", "bool", "null"))
_MAP, _SEQ = _TAG + "map", _TAG + "seq"
_PLAIN_KEY_TAGS = frozenset({_STR, _INT, _FLOAT, _BOOL, _NULL})
# The implicit resolvers `yaml.SafeLoader` uses, by first character, wildcards appended.
_IMPLICIT = {
    first: tuple(rules + Resolver.yaml_implicit_resolvers.get(None, []))
    for first, rules in Resolver.yaml_implicit_resolvers.items() if first is not None
}
_NO_RULES: tuple[tuple[str, Any], ...] = tuple(Resolver.yaml_implicit_resolvers.get(None, []))
_PLAIN_CACHE_LIMIT = 65_536


class _Unusual(Exception):
    """The document needs PyYAML's full constructor."""


class _Loader(_Parser, SafeConstructor, BaseResolver):
    """libyaml's parser and composer, `yaml.SafeLoader`'s tags, a fast constructor."""

    # Plain scalars repeat across objects and clusters (`v1`, `kube-system`, `true`): their tag
    # is looked up once. Shared by every loader; dict reads and writes are atomic.
    _plain_tags: dict[str, str] = {}

    def __init__(self, text: str) -> None:
        _Parser.__init__(self, text)
        SafeConstructor.__init__(self)
        BaseResolver.__init__(self)

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        """`Resolver.resolve` without path resolvers (SafeLoader registers none)."""
        if kind is ScalarNode:
            if not implicit[0]:
                return _STR
            tag = self._plain_tags.get(value)
            if tag is None:
                tag = _implicit_tag(value)
                if len(self._plain_tags) >= _PLAIN_CACHE_LIMIT:
                    self._plain_tags.clear()
                self._plain_tags[value] = tag
            return tag
        return _SEQ if kind is SequenceNode else _MAP

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def document(self, node: Node) -> Any:
        """The Python value of one document's node tree, as `construct_document` builds it."""
        try:
            return self._build(node, set())
        except _Unusual:
            return self.construct_document(node)

    def _build(self, node: Node, seen: set[int]) -> Any:
        tag = node.tag
        if type(node) is ScalarNode:
            if tag == _STR:
                return node.value
            if tag == _NULL:
                return None
            if tag == _BOOL:
                return self.bool_values[node.value.lower()]
            if tag == _INT:
                return self.construct_yaml_int(node)
            if tag == _FLOAT:
                return self.construct_yaml_float(node)
            raise _Unusual
        if id(node) in seen:  # an alias: shared or recursive objects are PyYAML's business
            raise _Unusual
        seen.add(id(node))
        if type(node) is SequenceNode and tag == _SEQ:
            return [self._build(item, seen) for item in node.value]
        if type(node) is MappingNode and tag == _MAP:
            return self._mapping(node, seen)
        raise _Unusual

    def _mapping(self, node: MappingNode, seen: set[int]) -> dict[Any, Any]:
        mapping = {}
        for key_node, value_node in node.value:
            if type(key_node) is not ScalarNode or key_node.tag not in _PLAIN_KEY_TAGS:
                raise _Unusual  # merge keys, `=` keys, unhashable keys
            # Most keys and values are strings: taken here, without a call.
            key = key_node.value if key_node.tag == _STR else self._build(key_node, seen)
            if type(value_node) is ScalarNode and value_node.tag == _STR:
                mapping[key] = value_node.value
            else:
                mapping[key] = self._build(value_node, seen)
        return mapping


def _short_form(suffix: str, value: Any) -> dict[str, Any]:
    """CloudFormation's `!Ref X` as its long form `{"Ref": "X"}`, `!GetAtt A.B` as
    `{"Fn::GetAtt": ["A", "B"]}`, `!Sub ...` as `{"Fn::Sub": ...}` and so on."""
    if suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {suffix if suffix in ("Ref", "Condition") else f"Fn::{suffix}": value}


class _TemplateLoader(_Loader):
    """A CloudFormation template: YAML (or JSON) with the short forms of its functions."""

    def _build(self, node: Node, seen: set[int]) -> Any:
        tag = node.tag
        if not tag.startswith("!"):
            return super()._build(node, seen)
        value: Any
        if type(node) is ScalarNode:
            value = node.value
        elif type(node) is SequenceNode:
            value = [self._build(item, seen) for item in node.value]
        else:
            value = self._mapping(node, seen)  # type: ignore[arg-type]  # a MappingNode: the kind left
        return _short_form(tag[1:], value)


def _construct_short_form(loader: SafeConstructor, suffix: str, node: Node) -> dict[str, Any]:
    value: Any
    if isinstance(node, ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]  # a MappingNode: the kind left
    return _short_form(suffix, value)


# What the lean constructor leaves to PyYAML's (anchors, merge keys) meets the short forms too.
_TemplateLoader.add_multi_constructor("!", _construct_short_form)


def _implicit_tag(value: str) -> str:
    for tag, regexp in _IMPLICIT.get(value[:1], _NO_RULES):
        if regexp.match(value):
            return str(tag)
    return _STR


@contextmanager
def _reading(loader_class: type[_Loader], text: str, path: str) -> Iterator[_Loader]:
    """A loader of `text` within the size limit, its YAML errors as `ConfigError`s naming
    `path`, disposed of after."""
    yamlsafe.check_size(text, path)
    loader = loader_class(text)
    try:
        yield loader
    except yaml.YAMLError as e:
        raise _error(e, path) from None
    finally:
        loader.dispose()


def compose(text: str, path: str) -> yaml.Node | None:
    """The node tree of a one-document file (values keep the text they were written as)."""
    with _reading(_Loader, text, path) as loader:
        return _limited(loader.get_single_node(), text, path)


#: Text in which only the composer, not the parser, finds an error: anchors and aliases (an
#: undefined or repeated one) and document markers (a second document).
_COMPOSER_MARKS = ("&", "*", "---", "...")


def check(text: str, path: str) -> None:
    """That a one-document file is YAML, as `compose` checks it. Where nothing but the parser
    can object, libyaml parses it without building a node tree (a sixth of the cost)."""
    if not hasattr(_Parser, "raw_parse") or any(mark in text for mark in _COMPOSER_MARKS):
        compose(text, path)
        return
    parser = _Parser(text)
    try:
        parser.raw_parse()
    except yaml.YAMLError as e:
        raise _error(e, path) from None
    finally:
        parser.dispose()


def load_all(text: str, path: str) -> list[Any]:
    """Every document of a file, empty ones included (as None)."""
    documents = []
    with _reading(_Loader, text, path) as loader:
        while loader.check_node():
            node = _limited(loader.get_node(), text, path)
            documents.append(None if node is None else loader.document(node))
    return documents


def load_template(text: str, path: str) -> Any:
    """A CloudFormation template (one document, YAML or JSON, short forms as long forms)."""
    with _reading(_TemplateLoader, text, path) as loader:
        node = _limited(loader.get_single_node(), text, path)
        return None if node is None else loader.document(node)


def _limited(node: yaml.Node | None, text: str, path: str) -> yaml.Node | None:
    """`node`, checked against `clmgit.yamlsafe`'s limits where `text` may hold an alias."""
    if yamlsafe.may_alias(text):
        yamlsafe.check_node(node, path, loops=True)
    return node


def _error(e: yaml.YAMLError, path: str) -> ConfigError:
    mark = getattr(e, "problem_mark", None)
    line = f":{mark.line + 1}" if mark else ""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return ConfigError(f"{path}{line}: the rendered YAML is malformed: {problem}")
