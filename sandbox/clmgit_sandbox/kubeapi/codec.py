"""Request bodies: media types and decoding, with the server's 400/415 answers.

JSON and YAML are accepted where the server accepts them. YAML aliases are refused: expanded,
a few bytes of anchors can become gigabytes, and the emulator must stay bounded.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from clmgit_sandbox.kubeapi import protobuf
from clmgit_sandbox.kubeapi.errors import bad_request, unsupported_media_type

JSON = "application/json"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
YAML_TYPES = {"application/yaml", "text/yaml", "application/x-yaml", "text/x-yaml"}
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, APPLY_PATCH, STRATEGIC_PATCH)


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (see module docstring)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("YAML aliases are not supported")
        return super().compose_node(parent, index)


def media_type(content_type: str | None) -> str:
    return (content_type or JSON).split(";")[0].strip().lower() or JSON


def _load_yaml(raw: bytes) -> Any:
    if raw.lstrip()[:1] == b"{":
        # JSON is YAML, and what clients send as apply patches: read as the API server reads
        # YAML (converted to JSON, then decoded), at the JSON parser's speed.
        try:
            return json.loads(raw, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            pass  # YAML's flow style, or not JSON: the YAML reader says what is wrong
    try:
        return yaml.load(raw.decode("utf-8"), Loader=_NoAliasLoader)
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as e:
        raise bad_request(f"error decoding YAML: {e}") from e


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


def _load_json(raw: bytes) -> Any:
    try:
        return json.loads(raw, parse_constant=_reject_constant)  # NaN is not JSON
    except (ValueError, RecursionError) as e:
        raise bad_request(f"couldn't get version/kind; json parse error: {e}") from e


def decode_object(raw: bytes, content_type: str | None) -> dict[str, Any]:
    """The body of a create or update: one object, JSON or YAML."""
    media = media_type(content_type)
    if media in YAML_TYPES:
        obj = _load_yaml(raw)
    elif media == protobuf.MEDIA_TYPE:
        try:
            obj = protobuf.decode(raw)
        except (protobuf.ProtobufError, UnicodeDecodeError, ValueError) as e:
            raise bad_request(f"error decoding protobuf: {e}") from e
    elif media == JSON or media == "*/*":
        obj = _load_json(raw)
    else:
        accepted = (JSON, "application/yaml", protobuf.MEDIA_TYPE)
        raise unsupported_media_type(unknown_format_message(accepted))
    if not isinstance(obj, dict):
        raise bad_request("the body of the request must be a single object")
    return obj


def decode_patch(raw: bytes, media: str) -> Any:
    """The body of a PATCH, decoded by its patch type."""
    if media == APPLY_PATCH:
        return _load_yaml(raw)
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise bad_request(f"error decoding patch: {e}") from e


def unknown_format_message(accepted: tuple[str, ...]) -> str:
    """The 415 message, naming the media types the endpoint accepts."""
    return (
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted)
    )
