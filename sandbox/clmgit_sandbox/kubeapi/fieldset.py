"""Field paths of an object, as server-side apply tracks them.

A path is a tuple of elements in the FieldsV1 spelling: `f:<name>` for a field, `k:{"name":"x"}` for
the item of a map-list, `v:"x"` for a value of a set-list. `leaves()` maps every path an object sets
to its value; list items of map-lists appear as a path of their own (the item's membership, `.` in
FieldsV1) with the value `ITEM`. The FieldsV1 encoding itself is `clmgit.engine.fieldsv1`'s.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from clmgit_sandbox.kubeapi.schema import Names, Schema

Path = tuple[str, ...]
ITEM = "\x00item"


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def item_element(item: dict[str, Any], keys: tuple[str, ...]) -> str:
    return "k:" + _compact({key: item[key] for key in keys if key in item})


def leaves(obj: dict[str, Any], schema: Schema, nodes: set[Path] | None = None) -> dict[Path, Any]:
    """Every path `obj` sets, with its value (whole value for atomic fields). `nodes`, if given,
    collects the paths of the maps and lists walked into (the `.` of an Update's FieldsV1)."""
    out: dict[Path, Any] = {}
    for name, value in obj.items():
        _walk(value, ("f:" + name,), (name,), schema, (out, nodes if nodes is not None else set()))
    return out


def _walk(value: Any, path: Path, names: Names, schema: Schema,
          found: tuple[dict[Path, Any], set[Path]]) -> None:
    out, nodes = found
    if isinstance(value, dict) and value and not schema.atomic_map(names):
        nodes.add(path)
        for name, child in value.items():
            _walk(child, path + ("f:" + name,), names + (name,), schema, found)
        return
    if isinstance(value, list) and value:
        list_type = schema.list_type(names)
        if list_type.kind == "map" and all(isinstance(item, dict) for item in value):
            nodes.add(path)
            for item in value:
                item_path = path + (item_element(item, list_type.keys),)
                out[item_path] = ITEM
                for name, child in item.items():
                    _walk(child, item_path + ("f:" + name,), names + (name,), schema, found)
            return
        if list_type.kind == "set":
            nodes.add(path)
            for item in value:
                out[path + ("v:" + _compact(item),)] = ITEM
            return
    out[path] = value


def path_string(path: Path) -> str:
    """`.spec.containers[name="app"].image`: how conflict messages spell a path."""
    parts = []
    for element in path:
        kind, text = element[:2], element[2:]
        if kind == "f:":
            parts.append("." + text)
        elif kind == "k:":
            keys = json.loads(text)
            parts.append("[" + ",".join(f"{k}={_compact(v)}" for k, v in keys.items()) + "]")
        else:
            parts.append("[=" + text + "]")
    return "".join(parts)


def merge(live: Any, config: Any, names: Names, schema: Schema) -> Any:
    """`config` laid over `live`: maps merge, map-lists merge by key, sets unite, rest replaces."""
    if isinstance(live, dict) and isinstance(config, dict) and not schema.atomic_map(names):
        result = dict(live)
        for name, value in config.items():
            if name in live:
                result[name] = merge(live[name], value, names + (name,), schema)
            else:
                result[name] = copy.deepcopy(value)
        return result
    if isinstance(live, list) and isinstance(config, list):
        list_type = schema.list_type(names)
        if list_type.kind == "map":
            return _merge_map_list(live, config, names, list_type.keys, schema)
        if list_type.kind == "set":
            return live + [copy.deepcopy(v) for v in config if v not in live]
    return copy.deepcopy(config)


def _merge_map_list(
    live: list[Any], config: list[Any], names: Names, keys: tuple[str, ...], schema: Schema
) -> list[Any]:
    result = list(live)
    index = {item_element(item, keys): i for i, item in enumerate(live) if isinstance(item, dict)}
    for item in config:
        if not isinstance(item, dict):
            continue
        element = item_element(item, keys)
        if element in index:
            position = index[element]
            result[position] = merge(result[position], item, names, schema)
        else:
            result.append(copy.deepcopy(item))
    return result


def remove_path(obj: dict[str, Any], path: Path, schema: Schema) -> None:
    """Delete what `path` points at, if it is there; emptied containers are left for the caller."""
    parent: Any = obj
    names: Names = ()
    for element in path[:-1]:
        parent, names = _step(parent, element, names, schema)
        if parent is None:
            return
    last = path[-1]
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif isinstance(parent, list):
        found, _ = _find(parent, last, names, schema)
        if found is not None:
            parent.remove(found)


def _step(node: Any, element: str, names: Names, schema: Schema) -> tuple[Any, Names]:
    if element.startswith("f:"):
        name = element[2:]
        return (node.get(name) if isinstance(node, dict) else None), names + (name,)
    if isinstance(node, list):
        return _find(node, element, names, schema)
    return None, names


def _find(items: list[Any], element: str, names: Names, schema: Schema) -> tuple[Any, Names]:
    if element.startswith("v:"):
        value = json.loads(element[2:])
        return (value if value in items else None), names
    keys = schema.list_type(names).keys
    for item in items:
        if isinstance(item, dict) and item_element(item, keys) == element:
            return item, names
    return None, names


def key_fields(element: str) -> set[str]:
    """The key field names of a `k:` element."""
    return set(json.loads(element[2:])) if element.startswith("k:") else set()
