"""Managed field sets: the `FieldsV1` encoding of `metadata.managedFields` and its path sets.

A path is a tuple of elements in the FieldsV1 spelling: `f:<name>` for a field, `k:{"name":"x"}`
for the item of a map-list, `v:"x"` for a value of a set-list. In FieldsV1 a key whose value is
`{}` is a path of its own; `"."` marks a path that also has children (a map-list item, a map
that a write added as a whole). Union and difference are plain set operations on paths, which a
nested-dict merge would get wrong (`{}` united with `{"f:b": {}}` must keep both paths).
"""

from __future__ import annotations

from typing import Any

FieldPath = tuple[str, ...]
FieldsV1 = dict[str, Any]


def paths(fields: FieldsV1 | None, prefix: FieldPath = ()) -> set[FieldPath]:
    """Every path a FieldsV1 tree names."""
    found: set[FieldPath] = set()
    for key, child in (fields or {}).items():
        if key == ".":
            found.add(prefix)
        elif child:
            found |= paths(child, prefix + (key,))
        else:
            found.add(prefix + (key,))
    return found


def to_fields_v1(field_paths: set[FieldPath]) -> FieldsV1:
    """The nested FieldsV1 form of a set of paths."""
    root: FieldsV1 = {}
    for path in field_paths:
        node = root
        for element in path:
            node = node.setdefault(element, {})
        node["."] = {}
    return _collapse(root)


def _collapse(node: FieldsV1) -> FieldsV1:
    children = {key: _collapse(child) for key, child in node.items() if key != "."}
    if not children:
        return {}
    return {".": {}, **children} if "." in node else children
