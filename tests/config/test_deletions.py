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
    ("{kind: Pod}", "deleting every Pod \\(it has no name, selector or labels\\) is refused"),
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
    with pytest.raises(ConfigError, match=r"deletions.yaml: post_apply\[1\]: deleting every Pod"):
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
    ("{selector: b=c}", "stacks are chosen by name or labels \\(their tags\\), not by a selector"),
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


@pytest.mark.parametrize(("entry", "what"), [
    ("{kind: Namespace, name: kube-system}", "Namespace kube-system"),
    ("{kind: Namespace, name: default}", "Namespace default"),
    ("{kind: Namespace, labels: {kubernetes.io/metadata.name: kube-system}}",
     "Namespace kube-system"),
    ("{kind: Namespace, selector: 'kubernetes.io/metadata.name in (x, default)'}",
     "Namespace default (selector 'kubernetes.io/metadata.name in (x, default)' does not"),
    ("{kind: Namespace, selector: kubernetes.io/metadata.name}",
     "Namespace kube-system (selector 'kubernetes.io/metadata.name' does not exclude it)"),
    ("{kind: Namespace, selector: 'kubernetes.io/metadata.name==default'}",
     "Namespace default (selector"),
    ("{kind: Namespace, selector: team=old}",
     "Namespace kube-system (selector 'team=old' does not exclude it)"),
    ("{kind: Namespace, labels: {team: old}}",
     "Namespace kube-system (its labels do not exclude it)"),
    ("{kind: Namespace, selector: 'kubernetes.io/metadata.name!=kube-system,team'}",
     "Namespace default (selector"),
    ("{kind: Namespace, selector: 'kubernetes.io/metadata.name notin (kube-system), x'}",
     "Namespace default (selector"),
    ("{kind: ConfigMap, namespace: team}",
     "every ConfigMap in namespace team (it has no name, selector or labels)"),
    ("{kind: Pod, has_owner: false}", "every Pod (it has no name, selector or labels)"),
    ("{kind: Deployment, selector: '!keep'}",
     "every Deployment (selector '!keep' requires nothing of an object)"),
    ("{kind: Secret, selector: 'app!=x, tier notin (a,b)'}",
     "every Secret (selector 'app!=x, tier notin (a,b)' requires nothing of an object)"),
    ("{kind: Secret, selector: ' , '}", "every Secret (selector ' , ' requires nothing"),
])
def test_dangerous_deletions_are_refused_in_one_sentence_naming_file_and_entry(
        entry: str, what: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_deletions(f"post_apply:\n- {{kind: Pod, name: a}}\n- {entry}\n", PATH)
    message = str(info.value)
    assert message.startswith(f"{PATH}: post_apply[1]: deleting {what}")
    assert message.endswith("is refused as dangerous; add allow_dangerous: true to the entry "
                            "if that is meant")


@pytest.mark.parametrize("entry", [
    "{kind: Namespace, name: kube-system-old}",
    "{kind: Namespace, selector: 'kubernetes.io/metadata.name notin (kube-system, default, "
    "kube-public,kube-node-lease),team'}",
    "{kind: Namespace, selector: 'kubernetes.io/metadata.name in (old, x)'}",
    "{kind: Namespace, labels: {kubernetes.io/metadata.name: old, team: x}}",
    "{kind: Pod, selector: 'app=x,!keep'}",
    "{kind: Pod, selector: 'tier in (a, b)'}",
    "{kind: Pod, selector: 'legacy'}",
])
def test_narrow_deletions_are_fine(entry: str) -> None:
    assert parse_deletions(f"pre_apply:\n- {entry}\n", PATH)


def test_allow_dangerous_lets_the_entry_through_and_is_kept() -> None:
    text = ("pre_apply:\n- {kind: Namespace, name: default, allow_dangerous: true}\n"
            "- {kind: ConfigMap, namespace: team, allow_dangerous: true}\n")
    first, every = parse_deletions(text, PATH).pre_apply
    assert first == Deletion("Namespace", name="default", allow_dangerous=True)
    assert first.to_dict() == {"kind": "Namespace", "name": "default", "allow_dangerous": True}
    assert every == Deletion("ConfigMap", "team", allow_dangerous=True)


def test_every_stack_of_the_cluster_is_dangerous_too() -> None:
    with pytest.raises(ConfigError, match=r"^cluster/cf-deletions.yaml: pre_apply\[0\]: deleting "
                       r"every stack of the cluster \(it has no name or labels\)"):
        parse_deletions("pre_apply:\n- {kind: Stack}\n", CF_PATH, stacks=True)
