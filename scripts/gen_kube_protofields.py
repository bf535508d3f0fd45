"""Regenerate `sandbox/clmgit_sandbox/kubeapi/protofields.json` from Kubernetes' generated.proto files.

    python scripts/gen_kube_protofields.py API_CHECKOUT APIMACHINERY_CHECKOUT

API_CHECKOUT is a checkout of github.com/kubernetes/api, APIMACHINERY_CHECKOUT one of
github.com/kubernetes/apimachinery. The output is a table, per protobuf message, of field
number -> [JSON name, type, label]: all the emulator needs to decode the protobuf bodies that
kubectl's typed clients send (see `protobuf.py`). Only field numbers, names and types are kept.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

API_GROUPS = (
    "core/v1", "apps/v1", "batch/v1", "policy/v1", "rbac/v1", "scheduling/v1", "storage/v1",
    "networking/v1", "authorization/v1", "autoscaling/v1", "coordination/v1", "events/v1",
    "authentication/v1",
)
APIMACHINERY = (
    "pkg/apis/meta/v1", "pkg/runtime", "pkg/util/intstr", "pkg/api/resource",
    "pkg/runtime/schema",
)
OUTPUT = Path(__file__).resolve().parent.parent / "sandbox/clmgit_sandbox/kubeapi/protofields.json"

_PACKAGE = re.compile(r"^package\s+([\w.]+);", re.M)
_MESSAGE = re.compile(r"^message\s+(\w+)\s*\{(.*?)^\}", re.M | re.S)
_FIELD = re.compile(
    r"^\s*(optional|repeated|required)?\s*(map<\s*[\w.]+\s*,\s*[\w.]+\s*>|[\w.]+)\s+(\w+)\s*=\s*(\d+)",
    re.M,
)


def _qualify(kind: str, package: str) -> str:
    if kind.startswith("."):
        return kind[1:]
    if "." in kind or kind in {"string", "bytes", "bool", "int32", "int64", "double", "float",
                               "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64"}:
        return kind
    return f"{package}.{kind}"


def parse(text: str) -> dict[str, dict[str, list[str]]]:
    package = _PACKAGE.search(text)
    assert package is not None
    name = package.group(1)
    text = re.sub(r"//[^\n]*", "", text)
    messages: dict[str, dict[str, list[str]]] = {}
    for message in _MESSAGE.finditer(text):
        fields: dict[str, list[str]] = {}
        for label, kind, field, number in _FIELD.findall(message.group(2)):
            if kind.startswith("map<"):
                key, value = (p.strip() for p in kind[4:-1].split(","))
                kind, label = f"map:{_qualify(key, name)}:{_qualify(value, name)}", "map"
            else:
                kind = _qualify(kind, name)
            fields[number] = [field, kind, label or "optional"]
        messages[f"{name}.{message.group(1)}"] = fields
    return messages


def main(api: str, apimachinery: str) -> None:
    table: dict[str, dict[str, list[str]]] = {}
    for group in API_GROUPS:
        table.update(parse((Path(api) / group / "generated.proto").read_text()))
    for package in APIMACHINERY:
        path = Path(apimachinery) / package / "generated.proto"
        if path.exists():
            table.update(parse(path.read_text()))
    OUTPUT.write_text(json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"{len(table)} messages written to {OUTPUT}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
