"""Merge patch, JSON patch and strategic merge patch, as the official client sends them."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_crd, make_deployment, make_node
from clmgit_sandbox.kubeapi.patch import merge_patch
from hypothesis import given
from hypothesis import strategies as st
from kubernetes import client
from kubernetes.dynamic import DynamicClient

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def deployment() -> dict:
    containers: list[dict[str, Any]] = [
        {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
        {"name": "sidecar", "image": "side:1"},
    ]
    body = make_deployment("web", replicas=2, containers=containers)
    body["metadata"]["finalizers"] = ["a/one"]
    body["spec"]["template"]["spec"]["tolerations"] = [{"key": "a", "operator": "Exists"}]
    return body


@pytest.fixture
def web(dynamic: DynamicClient):
    resource = dynamic.resources.get(api_version="apps/v1", kind="Deployment")
    resource.create(body=deployment(), namespace="default")
    return resource


def containers(obj) -> dict:
    return {c["name"]: c for c in obj.to_dict()["spec"]["template"]["spec"]["containers"]}


def test_strategic_merge_patch_merges_lists_by_key(web) -> None:
    patch = {
        "metadata": {"finalizers": ["a/two"]},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}]}
                    ],
                    "tolerations": [{"key": "b", "operator": "Exists"}],
                }
            }
        },
    }
    result = web.patch(
        name="web", namespace="default", body=patch
    )  # the dynamic client's default: strategic
    by_name = containers(result)
    assert by_name["app"]["image"] == "app:2" and by_name["sidecar"]["image"] == "side:1"
    assert by_name["app"]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert result.to_dict()["metadata"]["finalizers"] == ["a/one", "a/two"]  # a set: united
    assert result.to_dict()["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "b", "operator": "Exists"}
    ]


def test_strategic_merge_patch_directives(web) -> None:
    patch = {
        "metadata": {"$deleteFromPrimitiveList/finalizers": ["a/one"]},
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}},
    }
    result = web.patch(name="web", namespace="default", body=patch)
    assert list(containers(result)) == ["app"]
    assert "finalizers" not in result.to_dict()["metadata"]


def test_merge_patch_replaces_lists_and_null_deletes(web) -> None:
    patch = {
        "metadata": {"labels": {"app": None, "new": "x"}},
        "spec": {"template": {"spec": {"containers": [{"name": "only", "image": "o:1"}]}}},
    }
    result = web.patch(name="web", namespace="default", body=patch, content_type=MERGE)
    assert result.to_dict()["metadata"]["labels"] == {"new": "x"}
    assert list(containers(result)) == ["only"]


def test_json_patch_operations_and_failed_test(web) -> None:
    ops = [
        {"op": "test", "path": "/spec/replicas", "value": 2},
        {"op": "replace", "path": "/spec/replicas", "value": 5},
        {"op": "add", "path": "/metadata/labels/tier", "value": "front"},
        {"op": "remove", "path": "/spec/template/spec/containers/1"},
    ]
    result = web.patch(name="web", namespace="default", body=ops, content_type=JSON_PATCH)
    assert result.spec.replicas == 5 and result.metadata.labels.tier == "front"
    assert list(containers(result)) == ["app"]
    with pytest.raises(client.ApiException) as e:
        web.patch(
            name="web",
            namespace="default",
            content_type=JSON_PATCH,
            body=[{"op": "test", "path": "/spec/replicas", "value": 2}],
        )
    assert e.value.status == 422


def test_cordon_by_typed_patch_and_a_repeat_is_a_no_op(
    kube_server: KubeAPIServer, core: client.CoreV1Api
) -> None:
    kube_server.seed(make_node("n1"))
    cordoned = core.patch_node(
        "n1",
        {"spec": {"unschedulable": True}, "metadata": {"labels": {"lifecycle-status": "draining"}}},
    )
    assert cordoned.spec.unschedulable is True
    again = core.patch_node("n1", {"spec": {"unschedulable": True}})
    assert again.metadata.resource_version == cordoned.metadata.resource_version
    taint = {
        "key": "decommission-pending",
        "value": "rolling-upgrade",
        "effect": "PreferNoSchedule",
    }
    tainted = core.patch_node("n1", {"spec": {"taints": [taint]}})
    assert [t.key for t in tainted.spec.taints] == ["decommission-pending"]
    assert tainted.status.conditions[0].type == "Ready"  # status survives a spec patch


def test_strategic_merge_patch_of_a_custom_resource_is_a_415(dynamic: DynamicClient) -> None:
    crds = dynamic.resources.get(
        api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"
    )
    crds.create(body=make_crd("example.org", "Widget"))
    widgets = dynamic.resources.get(api_version="example.org/v1", kind="Widget")
    widgets.create(
        body={
            "apiVersion": "example.org/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
            "size": 1,
        },
        namespace="default",
    )
    with pytest.raises(client.ApiException) as e:
        widgets.patch(name="w", namespace="default", body={"size": 2})
    assert e.value.status == 415
    assert json.loads(e.value.body)["reason"] == "UnsupportedMediaType"
    merged = widgets.patch(name="w", namespace="default", body={"size": 2}, content_type=MERGE)
    assert merged.size == 2


def test_patch_of_a_missing_object_is_a_404(core: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as e:
        core.patch_namespaced_config_map("nope", "default", {"data": {"a": "b"}})
    assert e.value.status == 404


_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=3)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from("abcd"), inner, max_size=4), max_leaves=12)


def _reference_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 as its text reads."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _reference_merge_patch(result.get(key), value)
    return result


@given(_json, _json)
def test_merge_patch_is_rfc_7386_and_shares_nothing_with_its_inputs(target: Any,
                                                                    patch: Any) -> None:
    before = (copy.deepcopy(target), copy.deepcopy(patch))
    result, expected = merge_patch(target, patch), _reference_merge_patch(target, patch)
    assert result == expected
    assert json.dumps(result) == json.dumps(expected)  # key order too
    assert (target, patch) == before
    for inner in _containers(result):
        assert all(inner is not other for other in _containers((target, patch)))


def _containers(value: Any) -> list[Any]:
    found: list[Any] = []
    if isinstance(value, (dict, list, tuple)):
        found.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            found += _containers(item)
    return found
