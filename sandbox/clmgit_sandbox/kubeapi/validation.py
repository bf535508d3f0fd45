"""Validation that answers 422 Invalid: names, labels, and the per-kind rules clmgit can trip over.

This is a subset of the real server's validation, chosen for the mistakes a manifest or an
engine step can make: invalid names and labels, a workload selector that does not match its
template or is changed after creation, a PodDisruptionBudget with both minAvailable and
maxUnavailable, a Pod spec changed in place, a CRD whose name is not `<plural>.<group>`.
Anything else the real server would reject is accepted here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from clmgit_sandbox.kubeapi.errors import FieldError, invalid
from clmgit_sandbox.kubeapi.resources import ResourceType
from clmgit_sandbox.kubeapi.selectors import (
    DNS_SUBDOMAIN_RE,
    from_label_selector_object,
    is_label_key,
    is_label_value,
    matches_labels,
)
from clmgit_sandbox.kubeapi.store import Obj

Errors = list[FieldError]

_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")

_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)


def _name_errors(rtype: ResourceType, name: str) -> Errors:
    if rtype.kind == "Namespace":
        ok, limit, detail = _LABEL_RE.match(name), 63, _LABEL_MSG
    elif rtype.kind == "Service":
        ok, limit, detail = _DNS1035_RE.match(name), 63, _DNS1035_MSG
    elif rtype.group == "rbac.authorization.k8s.io":
        bad = name in (".", "..") or "/" in name or "%" in name
        return (
            [FieldError("FieldValueInvalid", "metadata.name", "may not contain '/' or '%'", name)]
            if bad
            else []
        )
    else:
        ok, limit, detail = DNS_SUBDOMAIN_RE.match(name), 253, _SUBDOMAIN_MSG
    if len(name) > limit:
        return [
            FieldError(
                "FieldValueInvalid",
                "metadata.name",
                f"must be no more than {limit} characters",
                name,
            )
        ]
    return [] if ok else [FieldError("FieldValueInvalid", "metadata.name", detail, name)]


def _label_errors(obj: Obj) -> Errors:
    errors = []
    for key, value in ((obj.get("metadata") or {}).get("labels") or {}).items():
        if not is_label_key(key):
            errors.append(
                FieldError("FieldValueInvalid", "metadata.labels", "invalid label key", key)
            )
        if not is_label_value(value):
            errors.append(
                FieldError("FieldValueInvalid", "metadata.labels", "invalid label value", value)
            )
    return errors


def _workload_errors(obj: Obj, old: Obj | None) -> Errors:
    spec = obj.get("spec") or {}
    selector = spec.get("selector")
    if not selector:
        return [FieldError("FieldValueRequired", "spec.selector")]
    template = ((spec.get("template") or {}).get("metadata")) or {}
    if not matches_labels(from_label_selector_object(selector), {"metadata": template}):
        labels = template.get("labels") or {}
        return [
            FieldError(
                "FieldValueInvalid",
                "spec.template.metadata.labels",
                "`selector` does not match template `labels`",
                json.dumps(labels, sort_keys=True),
            )
        ]
    if old is not None and (old.get("spec") or {}).get("selector") != selector:
        return [
            FieldError(
                "FieldValueInvalid", "spec.selector", "field is immutable", json.dumps(selector)
            )
        ]
    return []


def _pdb_errors(obj: Obj, old: Obj | None) -> Errors:
    spec = obj.get("spec") or {}
    if "minAvailable" in spec and "maxUnavailable" in spec:
        detail = "minAvailable and maxUnavailable cannot be both set"
        return [FieldError("FieldValueInvalid", "spec", detail, json.dumps(spec, sort_keys=True))]
    return []


def _pod_errors(obj: Obj, old: Obj | None) -> Errors:
    spec = obj.get("spec") or {}
    if not spec.get("containers"):
        return [FieldError("FieldValueRequired", "spec.containers")]
    if old is not None and _mutable_pod_spec(spec) != _mutable_pod_spec(old.get("spec") or {}):
        detail = (
            "pod updates may not change fields other than `spec.containers[*].image`, "
            "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` "
            "(only additions to existing tolerations), `spec.terminationGracePeriodSeconds`"
        )
        return [FieldError("FieldValueForbidden", "spec", detail)]
    return []


def _mutable_pod_spec(spec: Obj) -> Obj:
    """The pod spec with the fields an update may change blanked out."""
    ignored = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds")
    result = {k: v for k, v in spec.items() if k not in ignored}
    for field in ("containers", "initContainers"):
        result[field] = [
            {k: v for k, v in c.items() if k != "image"} for c in spec.get(field) or []
        ]
    return result


def _crd_errors(obj: Obj, old: Obj | None) -> Errors:
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    expected = f"{names.get('plural', '')}.{spec.get('group', '')}"
    name = obj["metadata"]["name"]
    if name != expected:
        return [
            FieldError(
                "FieldValueInvalid",
                "metadata.name",
                'must be spec.names.plural+"."+spec.group',
                name,
            )
        ]
    versions = spec.get("versions") or []
    if sum(1 for v in versions if v.get("storage")) != 1:
        return [
            FieldError(
                "FieldValueInvalid",
                "spec.versions",
                "must have exactly one version marked as storage version",
                len(versions),
            )
        ]
    return []


_KIND_RULES: dict[str, Callable[[Obj, Obj | None], Errors]] = {
    "Deployment": _workload_errors,
    "ReplicaSet": _workload_errors,
    "StatefulSet": _workload_errors,
    "DaemonSet": _workload_errors,
    "PodDisruptionBudget": _pdb_errors,
    "Pod": _pod_errors,
    "CustomResourceDefinition": _crd_errors,
}


def validate(rtype: ResourceType, obj: Obj, old: Obj | None = None) -> None:
    """Raise 422 Invalid if `obj` (replacing `old`, if given) breaks a rule."""
    name = obj["metadata"].get("name", "")
    errors = [] if old is not None else _name_errors(rtype, name)
    errors += _label_errors(obj)
    rule = _KIND_RULES.get(rtype.kind) if rtype.builtin else None
    if rule is not None:
        errors += rule(obj, old)
    if errors:
        raise invalid(rtype.group, rtype.kind, name, errors)


def require_name(rtype: ResourceType, obj: Obj) -> None:
    """A create needs `metadata.name` or `metadata.generateName`."""
    metadata = obj.get("metadata") or {}
    if not metadata.get("name") and not metadata.get("generateName"):
        detail = "name or generateName is required"
        raise invalid(
            rtype.group, rtype.kind, "", [FieldError("FieldValueRequired", "metadata.name", detail)]
        )
