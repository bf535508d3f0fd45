"""Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`).

kubectl ≥ 1.32 sends its typed clients' bodies (`create deployment`, `create configmap`, the
Eviction of `drain`, the SelfSubjectAccessReview of `auth can-i`, ...) as protobuf, and client-go
falls back to JSON after a 415 only for CBOR, never for protobuf: a server that refuses
protobuf breaks those commands. So the emulator decodes it.

The body is the envelope `k8s\\x00` + `runtime.Unknown{typeMeta{apiVersion, kind}, raw}`, `raw`
being the object as the Go type's generated protobuf message. Field numbers, names and types
come from `protofields.json`, a table generated from the Kubernetes generated.proto files
(`scripts/gen_kube_protofields.py`). The Go side writes every non-pointer field, empty or not;
the JSON encoder would have left the empty ones out (`omitempty`), so empty strings, false,
empty lists and empty objects are dropped from decoded objects (map entries are kept as sent).
Responses stay JSON: the client accepts `application/json` too.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import json
import struct
from importlib import resources
from typing import Any

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
_GROUP_PACKAGES = {
    "": "k8s.io.api.core.v1", "apps": "k8s.io.api.apps.v1", "batch": "k8s.io.api.batch.v1",
    "policy": "k8s.io.api.policy.v1", "rbac.authorization.k8s.io": "k8s.io.api.rbac.v1",
    "scheduling.k8s.io": "k8s.io.api.scheduling.v1", "storage.k8s.io": "k8s.io.api.storage.v1",
    "networking.k8s.io": "k8s.io.api.networking.v1",
    "authorization.k8s.io": "k8s.io.api.authorization.v1",
    "authentication.k8s.io": "k8s.io.api.authentication.v1",
    "autoscaling": "k8s.io.api.autoscaling.v1", "coordination.k8s.io": "k8s.io.api.coordination.v1",
    "events.k8s.io": "k8s.io.api.events.v1",
}
_VARINT_TYPES = {"int32", "int64", "uint32", "uint64", "bool", "sint32", "sint64", "enum"}


class ProtobufError(ValueError):
    """The body is not a Kubernetes protobuf object the emulator can decode."""


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, list[str]]]:
    text = resources.files("clmgit_sandbox.kubeapi").joinpath("protofields.json").read_text()
    table: dict[str, dict[str, list[str]]] = json.loads(text)
    return table


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of one message: ints for varints and fixed, bytes for
    length-delimited values."""
    out: list[tuple[int, int, Any]] = []
    pos, end = 0, len(data)
    value: Any
    while pos < end:
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            size, pos = _read_varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ProtobufError(f"unsupported protobuf wire type {wire}")
        if pos > end:
            raise ProtobufError("truncated protobuf message")
        out.append((number, wire, value))
    return out


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ProtobufError("truncated protobuf varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(kind: str, wire: int, value: Any) -> Any:
    if kind == "string":
        return bytes(value).decode("utf-8")
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if kind == "bool":
        return bool(value)
    if kind in ("double", "float") and wire in (1, 5):
        return struct.unpack("<d" if wire == 1 else "<f", value)[0]
    if kind in ("fixed64", "fixed32") and wire in (1, 5):
        return int.from_bytes(value, "little")
    if kind in _VARINT_TYPES and wire == 0:
        return _signed(value)
    raise ProtobufError(f"a {kind} field with wire type {wire}")


def _packed(kind: str, data: bytes) -> list[Any]:
    values, pos = [], 0
    while pos < len(data):
        value, pos = _read_varint(data, pos)
        values.append(_scalar(kind, 0, value))
    return values


def _special(name: str, data: bytes) -> tuple[bool, Any]:
    """Types whose JSON form is not an object of their fields."""
    if name in (_META + "Time", _META + "MicroTime"):
        fields = {n: v for n, _, v in _fields(data)}
        if not fields.get(1) and not fields.get(2):
            return True, None  # Go's zero time, which JSON writes as null
        when = dt.datetime.fromtimestamp(_signed(fields.get(1, 0)), dt.UTC)
        if name.endswith("MicroTime"):
            micros = fields.get(2, 0) // 1000
            return True, when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{micros:06d}Z"
        return True, when.strftime("%Y-%m-%dT%H:%M:%SZ")
    if name == "k8s.io.apimachinery.pkg.api.resource.Quantity":
        fields = {n: v for n, _, v in _fields(data)}
        return True, bytes(fields.get(1, b"")).decode()
    if name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
        fields = {n: v for n, _, v in _fields(data)}
        if fields.get(1, 0) == 0:
            return True, _signed(fields.get(2, 0)) if 2 in fields else 0
        return True, bytes(fields.get(3, b"")).decode()
    if name in ("k8s.io.apimachinery.pkg.runtime.RawExtension", _META + "FieldsV1"):
        fields = {n: v for n, _, v in _fields(data)}
        raw = bytes(fields.get(1, b""))
        return True, json.loads(raw) if raw else {}
    if name == _META + "Duration":
        fields = {n: v for n, _, v in _fields(data)}
        return True, f"{_signed(fields.get(1, 0)) / 1e9:g}s"
    return False, None


def decode_message(name: str, data: bytes) -> Any:
    """One message as its JSON form."""
    special, value = _special(name, data)
    if special:
        return value
    schema = _table().get(name)
    if schema is None:
        raise ProtobufError(f"no protobuf definition for {name}")
    out: dict[str, Any] = {}
    for number, wire, raw in _fields(data):
        spec = schema.get(str(number))
        if spec is None:
            continue  # a field newer than the table: skipped, as an old server would
        field, kind, label = spec
        if label == "map":
            _, key_kind, value_kind = kind.split(":", 2)
            entry = {n: (w, v) for n, w, v in _fields(raw)}
            key = _value(key_kind, *entry.get(1, (2, b"")))
            out.setdefault(field, {})[key] = _value(value_kind, *entry.get(2, (2, b"")))
        elif label == "repeated":
            if wire == 2 and kind in _VARINT_TYPES:
                out.setdefault(field, []).extend(_packed(kind, raw))
            else:
                out.setdefault(field, []).append(_value(kind, wire, raw))
        else:
            out[field] = _value(kind, wire, raw)
    return _prune(out)


def _value(kind: str, wire: int, raw: Any) -> Any:
    if "." in kind:
        if wire != 2:
            raise ProtobufError(f"a {kind} message with wire type {wire}")
        return decode_message(kind, bytes(raw))
    return _scalar(kind, wire, raw)


def _prune(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v not in ("", False, None, [], {})}


def decode(body: bytes) -> dict[str, Any]:
    """A request body (`k8s\\x00` + runtime.Unknown) as the object it carries, in JSON form."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the protobuf body does not start with the Kubernetes magic number")
    envelope = {n: v for n, _, v in _fields(body[len(MAGIC):])}
    type_meta = {n: bytes(v).decode() for n, _, v in _fields(bytes(envelope.get(1, b"")))}
    api_version, kind = type_meta.get(1, ""), type_meta.get(2, "")
    group, _, version = api_version.rpartition("/")
    if group in ("", "meta.k8s.io") and kind in ("DeleteOptions", "CreateOptions"):
        package = _META.rstrip(".")
    else:
        package = _GROUP_PACKAGES.get(group, "")
        if not package or not package.endswith(version):
            raise ProtobufError(f"protobuf bodies of {api_version} are not supported")
    obj = decode_message(f"{package}.{kind}", bytes(envelope.get(2, b"")))
    if not isinstance(obj, dict):
        raise ProtobufError(f"{kind} is not an object")
    return {"apiVersion": api_version, "kind": kind, **obj}
