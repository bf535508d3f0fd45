from __future__ import annotations

import pytest

from clmgit.config.deletions import Deletion, Deletions, parse_deletions
from clmgit.errors import ConfigError

PATH = "cluster/manifests/deletions.yaml"
CF_PATH = "cluster/cf-deletions.yaml"


def test_a_complete_deletions_file() -> None:
    text = """
pre_apply:
- kind: Deployment
  namespace: kube-system
  name: old
  propagation_policy: Foreground
  grace_period_seconds: 0
post_apply:
- kind: Pod
  selector: application=old,version!=2
  has_owner: false
- kind: ConfigMap
  namespace: default
  labels: {application: old, enabled: true}
  has_owner: true
  propagation_policy: Orphan
  grace_period_seconds: 30
"""
    assert parse_deletions(text, PATH) == Deletions(
        pre_apply=(Deletion("Deployment", "kube-system", name="old",
                            propagation_policy="Foreground", grace_period_seconds=0),),
        post_apply=(
            Deletion("Pod", selector="application=old,version!=2", has_owner=False),
            Deletion("ConfigMap", "default", labels={"application": "old", "enabled": "true"},
                     has_owner=True, propagation_policy="Orphan", grace_period_seconds=30),
        ),
    )


def test_an_empty_file_or_list_deletes_nothing() -> None:
    assert not parse_deletions("", PATH)
    assert parse_deletions("pre_apply: []\npost_apply:\n", PATH) == Deletions()


@pytest.mark.parametrize(("entry", "error"), [
    ("{namespace: x, name: y}", "pre_apply\\[0\\]: kind is required"),
    ("{kind: Pod}", "give exactly one of name, selector or labels$"),
    ("{kind: Pod, name: a, selector: b=c}", "exactly one of .* \\(found name, selector\\)"),
    ("{kind: Pod, name: a, labels: {b: c}}", "\\(found name, labels\\)"),
    ("{kind: Pod, selector: a=b, labels: {b: c}}", "\\(found selector, labels\\)"),
    ("{kind: Pod, name: a, has_owner: true}", "has_owner goes with selector or labels"),
    ("{kind: Pod, name: a, has_owner: yes-please}", "has_owner must be true or false"),
    ("{kind: Pod, name: a, propagation_policy: Later}",
     "propagation_policy must be one of Orphan, Background, Foreground, not 'Later'"),
    ("{kind: Pod, name: a, propagation_policy: background}", "propagation_policy must be one"),
    ("{kind: Pod, name: a, grace_period_seconds: -1}", "grace_period_seconds must be .* ≥ 0"),
    ("{kind: Pod, name: a, grace_period_seconds: 1.5}", "grace_period_seconds must be"),
    ("{kind: Pod, name: a, grace_period_seconds: true}", "grace_period_seconds must be"),
    ("{kind: Pod, name: ''}", "name must be a non-empty string"),
    ("{kind: Pod, name: 5}", "name must be a non-empty string"),
    ("{kind: Pod, labels: {}}", "labels must be a non-empty mapping"),
    ("{kind: Pod, labels: {a: [1]}}", "value of label 'a' must be a plain value"),
    ("{kind: Pod, name: a, force: true}", "unknown field 'force'"),
    ("just-a-string", "a deletion must be a mapping"),
])
def test_invalid_entries_name_file_and_entry(entry: str, error: str) -> None:
    with pytest.raises(ConfigError, match=error) as info:
        parse_deletions(f"pre_apply:\n- {entry}\n", PATH)
    assert str(info.value).startswith(f"{PATH}: pre_apply[0]: ")


def test_the_entry_is_counted_in_its_list() -> None:
    text = "post_apply:\n- {kind: Pod, name: a}\n- {kind: Pod}\n"
    with pytest.raises(ConfigError, match=r"deletions.yaml: post_apply\[1\]: give exactly one"):
        parse_deletions(text, PATH)


@pytest.mark.parametrize(("text", "error"), [
    ("delete: []", "only pre_apply and post_apply"),
    ("- kind: Pod", "only pre_apply and post_apply"),
    ("pre_apply: {kind: Pod}", "pre_apply must be a list"),
    ("pre_apply: [", "malformed YAML"),
])
def test_the_file_itself_must_be_well_formed(text: str, error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        parse_deletions(text, PATH)


def test_cf_deletions_delete_stacks() -> None:
    text = "pre_apply:\n- name: old-stack\npost_apply:\n- kind: Stack\n  labels: {app: x}\n"
    assert parse_deletions(text, CF_PATH, stacks=True) == Deletions(
        pre_apply=(Deletion("Stack", name="old-stack"),),
        post_apply=(Deletion("Stack", labels={"app": "x"}),),
    )


@pytest.mark.parametrize(("entry", "error"), [
    ("{kind: Deployment, name: a}", "kind must be Stack"),
    ("{name: a, namespace: b}", "stacks have no namespace"),
    ("{name: a, selector: b=c}", "exactly one of"),
    ("{labels: {a: b}, grace_period_seconds: -5}", "grace_period_seconds must be"),
])
def test_cf_deletions_are_validated_the_same_way(entry: str, error: str) -> None:
    with pytest.raises(ConfigError, match=f"^{CF_PATH}: pre_apply\\[0\\]: .*{error}"):
        parse_deletions(f"pre_apply:\n- {entry}\n", CF_PATH, stacks=True)


def test_to_dict_writes_only_what_is_set() -> None:
    d = Deletion("Pod", "ns", selector="a=b", has_owner=False)
    assert d.to_dict() == {"kind": "Pod", "namespace": "ns", "selector": "a=b",
                           "has_owner": False}
    assert Deletions(post_apply=(d,)).to_dict() == {"pre_apply": [], "post_apply": [d.to_dict()]}
