"""The three non-apply patch formats: JSON merge patch, JSON patch, strategic merge patch.

Each takes the current object and the decoded patch and returns the patched object, leaving its
inputs alone. A patch that decodes but cannot be applied raises `PatchError` (the server answers
422); strategic merge follows the list rules of `schema.py` and understands the `$patch`,
`$deleteFromPrimitiveList/` and `$setElementOrder/` directives that clients send.
"""

from __future__ import annotations

import copy
from typing import Any, cast

from clmgit_sandbox.kubeapi.schema import Names, Schema

#: Values that are never changed in place: a copy of one is the value itself.
_ATOMS = (str, int, float, bool)


class PatchError(ValueError):
    """The patch is well-formed but cannot be applied to this object."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: maps merge recursively, `null` deletes, everything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    _merge_into(result, patch)
    return result


def _merge_into(result: dict[str, Any], patch: dict[str, Any]) -> None:
    """Merge `patch` into `result`, a copy this module owns: one copy of the target in all, not
    one per level (applying a manifest is a merge patch of the whole object)."""
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            current = result.get(key)
            if not isinstance(current, dict):
                current = result[key] = {}
            _merge_into(current, value)
        else:
            result[key] = value if isinstance(value, _ATOMS) else copy.deepcopy(value)


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902: add, remove, replace, move, copy, test."""
    if not isinstance(operations, list):
        raise PatchError("json patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "path" not in op:
            raise PatchError(f"invalid operation {op!r}")
        doc = _apply_op(doc, op)
    return doc


def _apply_op(doc: Any, op: dict[str, Any]) -> Any:
    name, path = op.get("op"), _pointer(op["path"])
    if name == "test":
        if _get(doc, path) != op.get("value"):
            raise PatchError(f"testing value {op['path']} failed")
        return doc
    if name == "remove":
        return _remove(doc, path)
    if name in ("add", "replace"):
        if "value" not in op:
            raise PatchError(f"missing value for {name} operation")
        if name == "replace":
            doc = _remove(doc, path)
        return _add(doc, path, copy.deepcopy(op["value"]))
    if name in ("move", "copy"):
        source = _pointer(op.get("from", ""))
        value = copy.deepcopy(_get(doc, source))
        if name == "move":
            doc = _remove(doc, source)
        return _add(doc, path, value)
    raise PatchError(f"unexpected kind of operation: {name!r}")


def _pointer(text: str) -> list[str]:
    if text == "":
        return []
    if not text.startswith("/"):
        raise PatchError(f"invalid JSON pointer {text!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in text[1:].split("/")]


def _index(container: list[Any], token: str, *, insert: bool = False) -> int:
    if token == "-" and insert:
        return len(container)
    if not token.isdigit():
        raise PatchError(f"invalid array index {token!r}")
    index = int(token)
    if index > len(container) or (index == len(container) and not insert):
        raise PatchError(f"array index {index} out of bounds")
    return index


def _get(doc: Any, path: list[str]) -> Any:
    for token in path:
        if isinstance(doc, dict) and token in doc:
            doc = doc[token]
        elif isinstance(doc, list):
            doc = doc[_index(doc, token)]
        else:
            raise PatchError(f"path /{'/'.join(path)} does not exist")
    return doc


def _add(doc: Any, path: list[str], value: Any) -> Any:
    if not path:
        return value
    parent = _get(doc, path[:-1])
    if isinstance(parent, dict):
        parent[path[-1]] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, path[-1], insert=True), value)
    else:
        raise PatchError(f"cannot add to /{'/'.join(path)}")
    return doc


def _remove(doc: Any, path: list[str]) -> Any:
    if not path:
        return None
    parent = _get(doc, path[:-1])
    if isinstance(parent, dict) and path[-1] in parent:
        del parent[path[-1]]
    elif isinstance(parent, list):
        del parent[_index(parent, path[-1])]
    else:
        raise PatchError(f"path /{'/'.join(path)} does not exist")
    return doc


def strategic_merge_patch(target: dict[str, Any], patch: Any, schema: Schema) -> dict[str, Any]:
    """Strategic merge patch of a built-in object."""
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object")
    return _smp_map(target, patch, (), schema) or {}


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        # A null in a patch deletes; where there was nothing to delete it just disappears.
        return {
            k: _strip_directives(v)
            for k, v in value.items()
            if not k.startswith("$") and v is not None
        }
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def _smp_map(target: Any, patch: dict[str, Any], names: Names, schema: Schema) -> Any:
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace" or not isinstance(target, dict):
        return _strip_directives(patch)
    result = copy.deepcopy(target)
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            field_name = key.split("/", 1)[1]
            result[field_name] = [v for v in result.get(field_name, []) if v not in value]
        elif key.startswith("$"):
            continue  # $setElementOrder/ and $retainKeys only order or tidy the result
        elif value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            merged = _smp_map(result.get(key), value, names + (key,), schema)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _smp_list(result.get(key) or [], value, names + (key,), schema)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _smp_list(target: list[Any], patch: list[Any], names: Names, schema: Schema) -> list[Any]:
    list_type = schema.list_type(names)
    if list_type.kind == "set":
        return target + [copy.deepcopy(v) for v in patch if v not in target]
    if list_type.kind != "map" or not all(isinstance(item, dict) for item in patch):
        return cast(list[Any], _strip_directives(patch))
    if {"$patch": "replace"} in patch:
        return [_strip_directives(item) for item in patch if item != {"$patch": "replace"}]
    key = list_type.merge_key
    result = copy.deepcopy(target)
    for item in patch:
        position = next(
            (
                i
                for i, old in enumerate(result)
                if isinstance(old, dict) and old.get(key) == item.get(key)
            ),
            None,
        )
        merged = _smp_map(result[position] if position is not None else None, item, names, schema)
        if position is None:
            if merged is not None:
                result.append(merged)
        elif merged is None:
            del result[position]
        else:
            result[position] = merged
    return result
