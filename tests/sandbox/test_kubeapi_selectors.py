"""List with label selectors and field selectors, namespaced and cluster-wide."""

from __future__ import annotations

import json

import pytest
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_namespace, make_node, make_pod
from kubernetes import client
from kubernetes.dynamic import DynamicClient


@pytest.fixture
def labelled(core: client.CoreV1Api) -> client.CoreV1Api:
    for name, labels in {
        "a": {"app": "web", "tier": "front"},
        "b": {"app": "web", "tier": "back"},
        "c": {"app": "db"},
        "d": {},
    }.items():
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels},
        }
        core.create_namespaced_config_map("default", body)
    return core


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", ["a", "b"]),
        ("app==web", ["a", "b"]),
        ("app!=web", ["c", "d"]),  # objects without the label match !=
        ("app in (web, db)", ["a", "b", "c"]),
        ("tier notin (front)", ["b", "c", "d"]),
        ("tier", ["a", "b"]),
        ("!tier", ["c", "d"]),
        ("app=web,tier=back", ["b"]),
        ("app=web, !tier", []),
        ("", ["a", "b", "c", "d"]),
    ],
)
def test_label_selectors(labelled: client.CoreV1Api, selector: str, expected: list[str]) -> None:
    items = labelled.list_namespaced_config_map("default", label_selector=selector).items
    assert [i.metadata.name for i in items] == expected


def test_a_malformed_label_selector_is_a_400(labelled: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as e:
        labelled.list_namespaced_config_map("default", label_selector="app in (web")
    assert e.value.status == 400
    assert json.loads(e.value.body)["reason"] == "BadRequest"


@pytest.fixture
def pods(kube_server: KubeAPIServer, core: client.CoreV1Api) -> client.CoreV1Api:
    core.create_namespace(make_namespace("other"))
    kube_server.seed(
        make_pod("p1", node="node-1", labels={"app": "x"}),
        make_pod("p2", node="node-2", phase="Succeeded", labels={"app": "x"}),
        make_pod("p3", namespace="other", node="node-1"),
        make_pod("p4", phase="Pending"),
    )
    return core


def names(pod_list: client.V1PodList) -> list[str]:
    return [p.metadata.name for p in pod_list.items]


def test_field_selectors_on_pods_cluster_wide(pods: client.CoreV1Api) -> None:
    assert names(pods.list_pod_for_all_namespaces(field_selector="spec.nodeName=node-1")) == [
        "p1",
        "p3",
    ]
    assert names(pods.list_pod_for_all_namespaces(field_selector="spec.nodeName=")) == ["p4"]
    assert names(pods.list_pod_for_all_namespaces(field_selector="status.phase!=Running")) == [
        "p2",
        "p4",
    ]
    selector = "spec.nodeName=node-1,metadata.namespace!=other"
    assert names(pods.list_pod_for_all_namespaces(field_selector=selector)) == ["p1"]
    assert names(pods.list_namespaced_pod("default", field_selector="metadata.name=p2")) == ["p2"]
    both = pods.list_pod_for_all_namespaces(
        field_selector="status.phase=Running", label_selector="app=x"
    )
    assert names(both) == ["p1"]


def test_an_unsupported_field_selector_is_a_400(pods: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as e:
        pods.list_pod_for_all_namespaces(field_selector="spec.priority=1")
    assert e.value.status == 400
    assert json.loads(e.value.body)["message"] == "field label not supported: spec.priority"


def test_field_selector_on_nodes_through_the_dynamic_client(
    kube_server: KubeAPIServer, dynamic: DynamicClient
) -> None:
    kube_server.seed(make_node("n1"), make_node("n2", unschedulable=True))
    nodes = dynamic.resources.get(api_version="v1", kind="Node")
    cordoned = nodes.get(field_selector="spec.unschedulable=true")
    assert [n.metadata.name for n in cordoned.items] == ["n2"]
    assert [n.metadata.name for n in nodes.get(label_selector="missing").items] == []
