"""Declarative deletions (docs/explanation/design.md: the engine, step 7):
`manifests/deletions.yaml` for Kubernetes objects and `cf-deletions.yaml` for CloudFormation stacks,
each with `pre_apply` and `post_apply` lists.

An entry names what to delete by exactly one of `name`, `selector` (a label selector string) or
`labels` (a map, matched exactly); `has_owner` (only with a selector or labels) narrows it to
objects that have (true) or have no (false) owner. A missing object is not an error when applied.
In `cf-deletions.yaml` the kind is `Stack` (and may be left out), labels are stack tags, and there
is no namespace.

Some deletions are refused when the file is read, because one line would take the cluster down:
the Namespaces Kubernetes itself needs (`kube-system`, `default`, `kube-public`,
`kube-node-lease`), by name or by labels or a selector that does not exclude them by their
`kubernetes.io/metadata.name` label (they may carry any other); and every object of a kind: an
entry with neither a name nor a selector or labels, or a selector that requires nothing of an
object (only `!key`, `key!=value` or `key notin (...)` terms). An entry that means it says
`allow_dangerous: true`. (clmgit keeps no state in a cluster — leases and versions live in the
registry — so it has no namespace of its own to protect.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clmgit import yamledit
from clmgit.errors import ConfigError

DELETIONS_PATH = "cluster/manifests/deletions.yaml"
CF_DELETIONS_PATH = "cluster/cf-deletions.yaml"
STACK_KIND = "Stack"
PROPAGATION_POLICIES = ("Orphan", "Background", "Foreground")
PHASES = ("pre_apply", "post_apply")
_FIELDS = frozenset({"kind", "namespace", "name", "selector", "labels", "has_owner",
                     "propagation_policy", "grace_period_seconds", "allow_dangerous"})
#: Namespaces Kubernetes creates and needs; deleting one takes the cluster down.
PROTECTED_NAMESPACES = ("kube-system", "default", "kube-public", "kube-node-lease")
#: The label the API server puts on every Namespace: its name.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
_NEGATIVE_TERM = re.compile(r"^\s*(!\s*\S+|[^=!\s]+\s*!=.*|\S+\s+notin\s*\(.*\))\s*$")


@dataclass(frozen=True)
class Deletion:
    kind: str
    namespace: str | None = None
    name: str | None = None
    selector: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    has_owner: bool | None = None
    propagation_policy: str | None = None
    grace_period_seconds: int | None = None
    #: The author means a deletion that is refused otherwise (see the module's docstring).
    allow_dangerous: bool = False
    #: The file and entry it was read from (`cluster/cf-deletions.yaml: post_apply[0]`), for
    #: errors found when it is applied; not part of the entry's value.
    where: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The entry as written in a deletions file, unset fields left out."""
        out: dict[str, Any] = {"kind": self.kind}
        for key in ("namespace", "name", "selector", "has_owner", "propagation_policy",
                    "grace_period_seconds"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.labels:
            out["labels"] = dict(self.labels)
        if self.allow_dangerous:
            out["allow_dangerous"] = True
        return out


@dataclass(frozen=True)
class Deletions:
    pre_apply: tuple[Deletion, ...] = ()
    post_apply: tuple[Deletion, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.pre_apply or self.post_apply)

    def to_dict(self) -> dict[str, list[dict[str, Any]]]:
        return {phase: [d.to_dict() for d in getattr(self, phase)] for phase in PHASES}


def parse_deletions(text: str, path: str, *, stacks: bool = False) -> Deletions:
    """The deletions of a (rendered) deletions file; `stacks` for `cf-deletions.yaml`."""
    data = yamledit.load(text, path)
    if data is None:
        return Deletions()
    if not isinstance(data, Mapping) or set(data) - set(PHASES):
        raise ConfigError(f"{path}: must be a mapping with only pre_apply and post_apply lists")
    lists = {}
    for phase in PHASES:
        entries = data.get(phase) or []
        if not isinstance(entries, list):
            raise ConfigError(f"{path}: {phase} must be a list of deletions")
        lists[phase] = tuple(
            parse_deletion(raw, f"{path}: {phase}[{i}]", stacks=stacks)
            for i, raw in enumerate(entries)
        )
    return Deletions(**lists)


def parse_deletion(raw: Any, where: str, *, stacks: bool = False) -> Deletion:
    """One entry, validated; `where` names the file and entry in errors."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: a deletion must be a mapping")
    unknown = sorted(set(map(str, raw)) - _FIELDS)
    if unknown:
        raise ConfigError(f"{where}: unknown field {unknown[0]!r}")
    deletion = Deletion(
        kind=_kind(raw, where, stacks=stacks),
        namespace=_optional_text(raw, "namespace", where),
        name=_optional_text(raw, "name", where),
        selector=_optional_text(raw, "selector", where),
        labels=_labels(raw.get("labels"), where),
        has_owner=_optional_bool(raw, "has_owner", where),
        propagation_policy=_policy(raw.get("propagation_policy"), where),
        grace_period_seconds=_grace(raw.get("grace_period_seconds"), where),
        allow_dangerous=_optional_bool(raw, "allow_dangerous", where) or False,
        where=where,
    )
    _check_target(deletion, where, stacks=stacks)
    if not deletion.allow_dangerous:
        _refuse_dangerous(deletion, where, stacks=stacks)
    return deletion


def _check_target(d: Deletion, where: str, *, stacks: bool) -> None:
    given = [k for k in ("name", "selector", "labels") if getattr(d, k)]
    if len(given) > 1:
        raise ConfigError(f"{where}: give exactly one of name, selector or labels "
                          f"(found {', '.join(given)})")
    if d.has_owner is not None and d.name:
        raise ConfigError(f"{where}: has_owner goes with selector or labels, not with name")
    if stacks and d.namespace is not None:
        raise ConfigError(f"{where}: stacks have no namespace")
    if stacks and d.selector:
        raise ConfigError(f"{where}: stacks are chosen by name or labels (their tags), not by "
                          "a selector")


def _refuse_dangerous(d: Deletion, where: str, *, stacks: bool) -> None:
    """One entry that would take the cluster down is refused unless it says it means it."""
    what = "" if stacks else _protected_namespace(d)
    if not what and not (d.name or d.labels or (d.selector and _requires_something(d.selector))):
        things = "stack of the cluster" if stacks else d.kind + (
            f" in namespace {d.namespace}" if d.namespace else "")
        how = f"selector {d.selector!r} requires nothing of an object" if d.selector else (
            "it has no name or labels" if stacks else "it has no name, selector or labels")
        what = f"every {things} ({how})"
    if what:
        raise ConfigError(f"{where}: deleting {what} is refused as dangerous; add "
                          "allow_dangerous: true to the entry if that is meant")


def _protected_namespace(d: Deletion) -> str:
    """`Namespace <name> (why)` if the entry could delete one Kubernetes needs: by its name, or
    by labels or a selector that do not exclude it. Of such a Namespace only one label is known,
    `kubernetes.io/metadata.name` (its name); any other it may carry, so only a term on that
    label can exclude it."""
    if d.kind != "Namespace":
        return ""
    terms = [*(f"{k}={v}" for k, v in d.labels.items()), *_selector_terms(d.selector or "")]
    for namespace in PROTECTED_NAMESPACES:
        if d.name is not None:
            if d.name == namespace:
                return f"Namespace {namespace}"
        elif all(_may_hold(term, namespace) for term in terms):
            how = f"selector {d.selector!r} does" if d.selector else "its labels do"
            return f"Namespace {namespace} ({how} not exclude it)"
    return ""


_SET_TERM = re.compile(r"^(\S+)\s+(in|notin)\s*\((.*)\)$")
_EQUALITY_TERM = re.compile(r"^([^=!\s]+)\s*(==|=|!=)\s*(.*)$")


def _may_hold(term: str, namespace: str) -> bool:
    """Whether a selector term may hold for the Namespace `namespace`: only a term on its name
    label can be known false; a term that does not parse is taken to hold."""
    if term.startswith("!"):
        return term[1:].strip() != NAMESPACE_NAME_LABEL
    if (match := _SET_TERM.match(term)) is not None:
        key, op, values = match.groups()
        inside = namespace in {v.strip() for v in values.split(",")}
        return key != NAMESPACE_NAME_LABEL or inside == (op == "in")
    if (match := _EQUALITY_TERM.match(term)) is not None:
        key, op, value = match.groups()
        return key != NAMESPACE_NAME_LABEL or (value.strip() == namespace) == (op != "!=")
    return True


def _requires_something(selector: str) -> bool:
    """Whether a label selector has a term an object must satisfy by having a label: one that
    is not `!key`, `key!=value` or `key notin (...)` (those match every object without it)."""
    return any(not _NEGATIVE_TERM.match(term) for term in _selector_terms(selector))


def _selector_terms(selector: str) -> list[str]:
    """The terms of a label selector: split at commas outside parentheses, blanks dropped."""
    terms, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    return [t.strip() for t in [*terms, current] if t.strip()]


def _kind(raw: Mapping[str, Any], where: str, *, stacks: bool) -> str:
    kind = _optional_text(raw, "kind", where)
    if stacks:
        if kind not in (None, STACK_KIND):
            raise ConfigError(f"{where}: cf-deletions.yaml deletes stacks; kind must be "
                              f"{STACK_KIND}")
        return STACK_KIND
    if not kind:
        raise ConfigError(f"{where}: kind is required")
    return kind


def _optional_text(raw: Mapping[str, Any], key: str, where: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: {key} must be a non-empty string, not {value!r}")
    return value


def _optional_bool(raw: Mapping[str, Any], key: str, where: str) -> bool | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, bool):
        raise ConfigError(f"{where}: {key} must be true or false, not {value!r}")
    return value


def _labels(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(f"{where}: labels must be a non-empty mapping of label to value")
    labels = {}
    for key, item in value.items():
        if isinstance(item, Mapping | list) or item is None:
            raise ConfigError(f"{where}: the value of label {key!r} must be a plain value")
        labels[str(key)] = str(item).lower() if isinstance(item, bool) else str(item)
    return labels


def _policy(value: Any, where: str) -> str | None:
    if value is not None and value not in PROPAGATION_POLICIES:
        raise ConfigError(f"{where}: propagation_policy must be one of "
                          f"{', '.join(PROPAGATION_POLICIES)}, not {value!r}")
    policy: str | None = value  # one of PROPAGATION_POLICIES, or None
    return policy


def _grace(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: grace_period_seconds must be a whole number ≥ 0, "
                          f"not {value!r}")
    return value
