"""In-place edits of one record of a `clusters.yaml`: its `status` block and `lifecycle_status`.

The file is composed with libyaml (nodes with exact positions, about 0.3 s for 1,000 records; a
ruamel round trip of the same file takes seconds) and only the record's two values are replaced
in the text, so every other byte — comments, order, quoting, other records — stays as it was.
The edited record is parsed back and compared with what was asked for before anything is
returned. A record in flow style (`- {id: a, ...}`) is beyond a splice and is refused clearly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from clmgit import yamledit, yamlsafe
from clmgit.errors import RegistryError
from clmgit.registry.records import load_written, malformed_yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Edit = tuple[int, int, str]  # replace text[start:end] with the string


def set_fields(
    text: str,
    cluster_id: str,
    *,
    status: Mapping[str, Any] | None = None,
    lifecycle_status: str | None = None,
    name: str = "clusters.yaml",
) -> str:
    """`text` with the record of `cluster_id` given this status and/or lifecycle status."""
    text, record = _located(text, cluster_id, name)
    if record.flow_style:
        raise RegistryError(
            f"{name}: cluster {cluster_id!r} is written in flow style ({{...}}); "
            "write it as a block mapping so clmgit can record its status"
        )
    edits: list[Edit] = []
    if lifecycle_status is not None:
        edits.append(_scalar_edit(text, record, "lifecycle_status", lifecycle_status))
    if status is not None:
        edits.append(_status_edit(text, record, status))
    new = text
    for start, end, replacement in sorted(edits, reverse=True):
        new = new[:start] + replacement + new[end:]
    _check(text, new, record, cluster_id, status, lifecycle_status, name)
    return new


def read_record(text: str, cluster_id: str, *, name: str = "clusters.yaml") -> Any:
    """One record as CLM reads it (scalars as written, `records.load_written`): the file is only
    composed (libyaml, no Python objects built for the other records), then the record's own
    lines are loaded."""
    text, record = _located(text, cluster_id, name)
    start, stop = _region(text, record)
    data = load_written(text[start:stop], name)
    return data[0] if isinstance(data, list) and len(data) == 1 else data


# --- finding -----------------------------------------------------------------------------------


def _located(text: str, cluster_id: str, name: str) -> tuple[str, yaml.MappingNode]:
    """The text (ending in a newline) and the node of the record of `cluster_id` in it."""
    if text and not text.endswith("\n"):
        text += "\n"
    return text, _find_record(text, cluster_id, name)


def _region(text: str, record: yaml.MappingNode) -> tuple[int, int]:
    """From the start of the record's first line to the end of its last line."""
    return text.rfind("\n", 0, record.start_mark.index) + 1, _line_after(text, _end(record))


def _get(node: yaml.MappingNode, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return k, v
    return None


def _find_record(text: str, cluster_id: str, name: str) -> yaml.MappingNode:
    try:
        root = yamlsafe.compose(text, name, _LOADER)
    except yaml.YAMLError as e:
        raise malformed_yaml(e, name) from None
    found = _get(root, "clusters") if isinstance(root, yaml.MappingNode) else None
    if found is None or not isinstance(found[1], yaml.SequenceNode):
        raise RegistryError(f"{name}: expected a mapping with a `clusters:` list")
    for item in found[1].value:
        if isinstance(item, yaml.MappingNode):
            entry = _get(item, "id")
            if entry is not None and entry[1].value == cluster_id:
                return item
    raise RegistryError(f"{name}: no cluster {cluster_id!r}")


def _end(node: yaml.Node) -> int:
    """Where a node's text ends. A block collection's own end mark lies at the next token, past
    any comments after it, so its end is the end of its last value."""
    if not isinstance(node, yaml.CollectionNode) or node.flow_style or not node.value:
        return int(node.end_mark.index)
    last = node.value[-1]
    return _end(last[1] if isinstance(node, yaml.MappingNode) else last)


# --- editing -----------------------------------------------------------------------------------


def _line_after(text: str, index: int) -> int:
    """The start of the line after the one holding `index`."""
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def _insert_key(text: str, record: yaml.MappingNode, block: str) -> Edit:
    """A new `key: ...` block (indented, ending in a newline) after the record's last line."""
    at = _line_after(text, _end(record))
    return at, at, block


def _key_column(record: yaml.MappingNode) -> int:
    return int(record.value[0][0].start_mark.column)


def _scalar_edit(text: str, record: yaml.MappingNode, key: str, value: str) -> Edit:
    found = _get(record, key)
    if found is None:
        line = " " * _key_column(record) + f"{key}: {yamledit.format_scalar(value)}\n"
        return _insert_key(text, record, line)
    node = found[1]
    start, end = node.start_mark.index, _end(node)
    if not isinstance(node, yaml.ScalarNode) or node.style in ("|", ">"):
        return start, end, yamledit.format_scalar(value)
    return start, end, yamledit.format_scalar(value, old_token=text[start:end])


class _Dumper(yaml.SafeDumper):
    """Block style, with strings of several lines double-quoted on one line (`\\n`)."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def _block(data: Mapping[str, Any], indent: int) -> str:
    """`data` as block YAML, every line indented by `indent`."""
    dumped = yaml.dump(dict(data), Dumper=_Dumper, default_flow_style=False, sort_keys=False,
                       allow_unicode=True, width=1 << 16)
    return "".join(" " * indent + line for line in dumped.splitlines(keepends=True))


def _status_edit(text: str, record: yaml.MappingNode, status: Mapping[str, Any]) -> Edit:
    found = _get(record, "status")
    if found is None:
        column = _key_column(record)
        return _insert_key(text, record, " " * column + "status:\n" + _block(status, column + 2))
    key, node = found
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        # Replace from the first key of the block to the end of its last value.
        column = int(node.start_mark.column)
        block = _block(status, column)
        return node.start_mark.index, _end(node), block[column:].rstrip("\n")
    # `status:` empty, null or in flow style: a block of its own on the next lines.
    colon = text.index(":", key.end_mark.index)
    empty = isinstance(node, yaml.ScalarNode) and node.value == ""
    end = colon + 1 if empty else _end(node)
    block = _block(status, int(key.start_mark.column) + 2)
    return colon, end, ":\n" + block.rstrip("\n")


# --- checking ----------------------------------------------------------------------------------


def _check(
    text: str,
    new: str,
    record: yaml.MappingNode,
    cluster_id: str,
    status: Mapping[str, Any] | None,
    lifecycle_status: str | None,
    name: str,
) -> None:
    """Parse the edited record back and compare it with the old one plus the change. Every edit
    lies between the start of the record's first line and the end of its last line, so only that
    region is parsed, and the text around it is the same by construction."""
    start, stop = _region(text, record)
    expected = _data(text[start:stop])
    if status is not None:
        expected["status"] = yamledit.normalize(dict(status))
    if lifecycle_status is not None:
        expected["lifecycle_status"] = lifecycle_status
    try:
        actual = _data(new[start:stop + len(new) - len(text)])
    except (yaml.YAMLError, ValueError):
        actual = None
    if actual != expected or new[:start] != text[:start]:
        raise RegistryError(
            f"{name}: cannot record the status of {cluster_id!r} without changing other "
            "content; the file was left as it was"
        )


def _data(region: str) -> dict[str, Any]:
    """The record in a region of lines: `- id: ...` (a one-item list) or `id: ...` (a mapping)."""
    data = yaml.load(region, Loader=_LOADER)
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        raise ValueError("not a record")
    return dict(yamledit.normalize(data))
