"""Discovery: what the official client learns about the emulator before it calls anything."""

from __future__ import annotations

import pytest
from clmgit_sandbox.kubeapi.fixtures import make_crd
from kubernetes import client
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError

BUILTIN_KINDS = [
    ("v1", "Namespace", False),
    ("v1", "Node", False),
    ("v1", "Pod", True),
    ("v1", "Service", True),
    ("v1", "ConfigMap", True),
    ("v1", "Secret", True),
    ("v1", "ServiceAccount", True),
    ("apps/v1", "Deployment", True),
    ("apps/v1", "DaemonSet", True),
    ("apps/v1", "StatefulSet", True),
    ("apps/v1", "ReplicaSet", True),
    ("batch/v1", "Job", True),
    ("batch/v1", "CronJob", True),
    ("policy/v1", "PodDisruptionBudget", True),
    ("rbac.authorization.k8s.io/v1", "Role", True),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", False),
    ("storage.k8s.io/v1", "StorageClass", False),
    ("scheduling.k8s.io/v1", "PriorityClass", False),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", False),
]

CRD = make_crd("zalando.org", "StackSet", status_subresource=True)


def test_version_reports_a_kubernetes_release(api_client: client.ApiClient) -> None:
    info = client.VersionApi(api_client).get_code()
    assert (info.major, info.minor) == ("1", "31")
    assert info.git_version.startswith("v1.31.")


def test_core_and_group_discovery(api_client: client.ApiClient) -> None:
    assert client.CoreApi(api_client).get_api_versions().versions == ["v1"]
    groups = {g.name: g for g in client.ApisApi(api_client).get_api_versions().groups}
    assert {"apps", "batch", "policy", "rbac.authorization.k8s.io", "storage.k8s.io"} <= set(groups)
    assert groups["apps"].preferred_version.group_version == "apps/v1"
    resources = client.CoreV1Api(api_client).get_api_resources().resources
    by_name = {r.name: r for r in resources}
    assert by_name["pods"].namespaced and by_name["pods"].kind == "Pod"
    assert not by_name["nodes"].namespaced
    assert (
        by_name["pods/eviction"].group == "policy" and by_name["pods/eviction"].kind == "Eviction"
    )
    assert by_name["pods/status"].verbs == ["get", "patch", "update"]
    assert "configmaps/status" not in by_name


@pytest.mark.parametrize(("api_version", "kind", "namespaced"), BUILTIN_KINDS)
def test_dynamic_client_finds_every_builtin_kind(
    dynamic: DynamicClient, api_version: str, kind: str, namespaced: bool
) -> None:
    resource = dynamic.resources.get(api_version=api_version, kind=kind)
    assert resource.namespaced is namespaced
    assert resource.get().kind == kind + "List"


def test_custom_resources_are_discovered_once_their_crd_exists(dynamic: DynamicClient) -> None:
    with pytest.raises(ResourceNotFoundError):
        dynamic.resources.get(api_version="zalando.org/v1", kind="StackSet")
    crds = dynamic.resources.get(
        api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"
    )
    created = crds.create(body=CRD)
    conditions = {c["type"]: c["status"] for c in created.status.conditions}
    assert conditions["Established"] == "True"

    stacksets = dynamic.resources.get(api_version="zalando.org/v1", kind="StackSet")
    assert stacksets.namespaced and stacksets.subresources["status"]
    stacksets.create(
        body={"apiVersion": "zalando.org/v1", "kind": "StackSet", "metadata": {"name": "s"}},
        namespace="default",
    )
    items = stacksets.get(namespace="default").items
    # Unlike built-in lists, custom resource lists carry apiVersion and kind on each item.
    assert [(i.kind, i.metadata.name) for i in items] == [("StackSet", "s")]

    crds.delete(name="stacksets.zalando.org")
    dynamic.resources.invalidate_cache()
    with pytest.raises(ResourceNotFoundError):
        dynamic.resources.get(api_version="zalando.org/v1", kind="StackSet")


def test_unknown_paths_are_a_404_status(raw_call) -> None:
    for path in ("/apis/nope.example/v1", "/api/v1/widgets", "/api/v1/pods/not-namespaced"):
        code, body = raw_call("GET", path)
        assert code == 404
        assert body["reason"] == "NotFound"
        assert body["message"] == "the server could not find the requested resource"
