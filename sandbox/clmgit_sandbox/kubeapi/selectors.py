"""Label selectors (string and object form) and field selectors, as list and delete use them.

String grammar as in k8s.io/apimachinery/pkg/labels: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
`k notin (a,b)`, `k`, `!k`, `k>1`, `k<1`, joined by commas. `!=` and `notin` match objects
without the label. Field selectors support `=`, `==` and `!=` on the fields each kind indexes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from clmgit_sandbox.kubeapi.errors import bad_request

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN_RE = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
_QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")

_EXISTS_RE = re.compile(r"^(!?)\s*([^\s=!<>(),]+)$")
_EQUALITY_RE = re.compile(r"^([^\s=!<>(),]+)\s*(==|=|!=|>|<)\s*([^\s=!<>(),]*)$")
_SET_RE = re.compile(r"^([^\s=!<>(),]+)\s+(in|notin)\s*\(([^()]*)\)$")


@dataclass(frozen=True)
class Requirement:
    """One clause of a label selector."""

    key: str
    operator: str  # in, notin, exists, !, gt, lt
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator == "in":
            return present and value in self.values
        if self.operator == "notin":
            return not present or value not in self.values
        return present and _compare_int(value, self.operator, self.values[0])


def _compare_int(value: str | None, operator: str, bound: str) -> bool:
    try:
        number = int(value or "")
    except ValueError:
        return False
    return number > int(bound) if operator == "gt" else number < int(bound)


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part.strip() for part in parts]


def _invalid(text: str, why: str) -> Exception:
    return bad_request(f"unable to parse requirement: {text!r}: {why}")


def _requirement(text: str) -> Requirement:
    if match := _SET_RE.match(text):
        key, operator, raw = match.groups()
        values = tuple(v.strip() for v in raw.split(","))
        return _checked(text, Requirement(key, operator, values))
    if match := _EQUALITY_RE.match(text):
        key, symbol, value = match.groups()
        operator = {"=": "in", "==": "in", "!=": "notin", ">": "gt", "<": "lt"}[symbol]
        if operator in ("gt", "lt") and not value.lstrip("-").isdigit():
            raise _invalid(text, "for 'gt', 'lt' operators, the value must be an integer")
        return _checked(text, Requirement(key, operator, (value,)))
    if match := _EXISTS_RE.match(text):
        bang, key = match.groups()
        return _checked(text, Requirement(key, "!" if bang else "exists"))
    raise _invalid(text, "not a valid requirement")


def is_label_key(key: str) -> bool:
    """`[prefix/]name`: a DNS subdomain prefix, a qualified name of at most 63 characters."""
    prefix, slash, name = key.rpartition("/")
    if slash and not (prefix and len(prefix) <= 253 and DNS_SUBDOMAIN_RE.match(prefix)):
        return False
    return len(name) <= 63 and bool(_QUALIFIED_NAME_RE.match(name))


def is_label_value(value: object) -> bool:
    if not isinstance(value, str):
        return False
    return value == "" or (len(value) <= 63 and bool(_QUALIFIED_NAME_RE.match(value)))


def _checked(text: str, requirement: Requirement) -> Requirement:
    if not is_label_key(requirement.key):
        raise _invalid(text, f"invalid label key {requirement.key!r}")
    if requirement.operator in ("in", "notin"):
        for value in requirement.values:
            if not is_label_value(value):
                raise _invalid(text, f"invalid label value {value!r}")
    return requirement


def parse_label_selector(text: str | None) -> list[Requirement]:
    """Parse `labelSelector`; an empty selector is an empty list (matches everything)."""
    if not text or not text.strip():
        return []
    return [_requirement(part) for part in _split_top_level(text)]


def from_label_selector_object(selector: dict[str, Any] | None) -> list[Requirement]:
    """A `LabelSelector` object (matchLabels, matchExpressions) as requirements."""
    selector = selector or {}
    requirements = [
        Requirement(k, "in", (v,)) for k, v in (selector.get("matchLabels") or {}).items()
    ]
    operators = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expression in selector.get("matchExpressions") or []:
        operator = operators.get(expression.get("operator", ""), "in")
        values = tuple(expression.get("values") or ())
        requirements.append(Requirement(expression.get("key", ""), operator, values))
    return requirements


def matches_labels(requirements: list[Requirement], obj: dict[str, Any]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return all(requirement.matches(labels) for requirement in requirements)


# -- field selectors -------------------------------------------------------------------------

_COMMON_FIELDS = {"metadata.name", "metadata.namespace"}

#: Fields each built-in kind indexes for field selectors, beyond metadata.name/namespace.
FIELDS_BY_KIND = {
    "Pod": {
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    },
    "Node": {"spec.unschedulable"},
    "Namespace": {"status.phase"},
    "Secret": {"type"},
    "ReplicaSet": {"status.replicas"},
    "Job": {"status.successful"},
    "Event": {
        "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type",
    },
}


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    equal: bool
    value: str

    def matches(self, obj: dict[str, Any]) -> bool:
        return (field_value(obj, self.field) == self.value) == self.equal


def field_value(obj: dict[str, Any], dotted: str) -> str:
    node: Any = obj
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, bool):
        return "true" if node else "false"
    return "" if node is None else str(node)


def parse_field_selector(text: str | None, kind: str, builtin: bool) -> list[FieldRequirement]:
    """Parse `fieldSelector` for `kind`; unsupported fields are a 400, as on a real server."""
    if not text or not text.strip():
        return []
    supported = _COMMON_FIELDS | (FIELDS_BY_KIND.get(kind, set()) if builtin else set())
    requirements = []
    for part in _split_unescaped(text, ","):
        match = re.match(r"^\s*([^=!\s]+)\s*(==|=|!=)(.*)$", part)
        if not match:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field, operator, value = match.groups()
        if field not in supported:
            if builtin:
                raise bad_request(f"field label not supported: {field}")
            raise bad_request(
                f'"{field}" is not a known field selector: '
                'only "metadata.name", "metadata.namespace"'
            )
        requirements.append(FieldRequirement(field, operator != "!=", _unescape(value.strip())))
    return requirements


def _split_unescaped(text: str, separator: str) -> list[str]:
    return [p for p in re.split(r"(?<!\\)" + re.escape(separator), text)]


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def matches_fields(requirements: list[FieldRequirement], obj: dict[str, Any]) -> bool:
    return all(requirement.matches(obj) for requirement in requirements)
