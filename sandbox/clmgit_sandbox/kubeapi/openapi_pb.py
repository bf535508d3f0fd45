"""`/openapi/v2` in protobuf: the Swagger 2.0 document encoded as gnostic's `openapi.v2.Document`.

client-go asks for OpenAPI v2 in protobuf only (`application/com.github.proto-openapi.spec.v2
@v1.0+protobuf`), and kubectl 1.27 needs that document for `apply`, `diff` and `explain`. This
module writes the protobuf wire format by hand for the part of the message tree the emulator's
document uses: info, paths (operations with their query, path and body parameters, responses,
vendor extensions) and definitions (schemas with `$ref`, type, format, description, required,
properties, items, additionalProperties, allOf and vendor extensions). Vendor extension values
go as YAML text, as gnostic stores them. Field numbers are those of gnostic's OpenAPIv2.proto.
"""

from __future__ import annotations

from typing import Any

import yaml

#: What the response says it is (Go cannot parse the `@` of the media type the client asks for).
MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _str(field: int, text: Any) -> bytes:
    return _bytes(field, str(text).encode()) if text not in (None, "") else b""


def _bool(field: int, value: Any) -> bytes:
    return _varint(field << 3) + b"\x01" if value else b""


def _int(field: int, value: Any) -> bytes:
    return _varint(field << 3) + _varint(int(value)) if isinstance(value, int) else b""


def _extensions(field: int, node: dict[str, Any]) -> bytes:
    """`x-…` keys as NamedAny{name, Any{yaml}}."""
    out = b""
    for key, value in node.items():
        if key.startswith("x-"):
            text = yaml.safe_dump(value, default_flow_style=False, sort_keys=False)
            out += _bytes(field, _str(1, key) + _bytes(2, _str(2, text)))
    return out


def schema(node: dict[str, Any]) -> bytes:
    """openapi.v2.Schema."""
    out = _str(1, node.get("$ref")) + _str(2, node.get("format")) + _str(3, node.get("title"))
    out += _str(4, node.get("description"))
    for name in ("maxLength", "minLength", "maxItems", "minItems"):
        out += _int({"maxLength": 11, "minLength": 12, "maxItems": 14, "minItems": 15}[name],
                    node.get(name))
    out += _str(13, node.get("pattern")) + _bool(16, node.get("uniqueItems"))
    for required in node.get("required") or []:
        out += _str(19, required)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out += _bytes(21, _bytes(1, schema(extra)))
    elif isinstance(extra, bool):
        out += _bytes(21, _varint(2 << 3) + (b"\x01" if extra else b"\x00"))
    kinds = node.get("type")
    if kinds:
        values = kinds if isinstance(kinds, list) else [kinds]
        out += _bytes(22, b"".join(_str(1, k) for k in values))
    items = node.get("items")
    if isinstance(items, dict):
        out += _bytes(23, _bytes(1, schema(items)))
    for part in node.get("allOf") or []:
        out += _bytes(24, schema(part))
    properties = node.get("properties")
    if isinstance(properties, dict):
        named = b"".join(
            _bytes(1, _str(1, name) + _bytes(2, schema(sub))) for name, sub in properties.items()
        )
        out += _bytes(25, named)
    out += _bool(27, node.get("readOnly"))
    return out + _extensions(31, node)


def _parameter(param: dict[str, Any]) -> bytes:
    """openapi.v2.ParametersItem{parameter: Parameter{body | non_body}}."""
    where = param.get("in")
    if where == "body":
        body = _str(2, param["name"]) + _str(3, "body") + _bool(4, param.get("required"))
        body += _bytes(5, schema(param.get("schema") or {}))
        inner = _bytes(1, body)
    elif where == "path":
        sub = _bool(1, True) + _str(2, "path") + _str(4, param["name"])
        sub += _str(5, param.get("type", "string"))
        inner = _bytes(2, _bytes(4, sub))
    else:
        sub = _str(2, "query") + _str(4, param["name"]) + _str(6, param.get("type", "string"))
        sub += _bool(20, param.get("uniqueItems"))
        inner = _bytes(2, _bytes(3, sub))
    return _bytes(1, inner)


def _operation(op: dict[str, Any]) -> bytes:
    out = _str(5, op.get("operationId"))
    for media in op.get("consumes") or []:
        out += _str(7, media)
    for param in op.get("parameters") or []:
        out += _bytes(8, _parameter(param))
    codes = b""
    for code, response in (op.get("responses") or {}).items():
        body = _str(1, response.get("description"))
        if "schema" in response:
            body += _bytes(2, _bytes(1, schema(response["schema"])))
        codes += _bytes(1, _str(1, code) + _bytes(2, _bytes(1, body)))
    out += _bytes(9, codes)
    return out + _extensions(13, op)


_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "patch": 8}


def _path_item(item: dict[str, Any]) -> bytes:
    out = b""
    for method, field in _METHODS.items():
        if method in item:
            out += _bytes(field, _operation(item[method]))
    for param in item.get("parameters") or []:
        out += _bytes(9, _parameter(param))
    return out


def document(doc: dict[str, Any]) -> bytes:
    """openapi.v2.Document from a Swagger 2.0 document (as `openapi.v2_document` builds it)."""
    info = doc.get("info") or {}
    out = _str(1, doc.get("swagger", "2.0")) + _bytes(2, _str(1, info.get("title")) + _str(
        2, info.get("version")))
    paths = b"".join(
        _bytes(2, _str(1, path) + _bytes(2, _path_item(item)))
        for path, item in (doc.get("paths") or {}).items()
    )
    out += _bytes(8, paths)
    definitions = b"".join(
        _bytes(1, _str(1, name) + _bytes(2, schema(sub)))
        for name, sub in (doc.get("definitions") or {}).items()
    )
    return out + _bytes(9, definitions)
