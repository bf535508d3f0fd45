"""Create, get, list, update, status subresources and the errors that go with them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_deployment, make_namespace
from kubernetes import client
from kubernetes.dynamic import DynamicClient


def configmap(name: str, data: dict[str, str] | None = None, **labels: str) -> dict:
    meta = {"name": name, "labels": labels} if labels else {"name": name}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {"k": "v"}}


def pod(name: str, **extra: object) -> dict:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "app:1"}]},
    }
    body.update(extra)
    return body


def status(error: pytest.ExceptionInfo[client.ApiException]) -> dict:
    return json.loads(error.value.body)


def test_create_sets_server_fields_and_get_returns_the_object(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_config_map("default", configmap("settings", {"a": "1"}))
    meta = created.metadata
    assert meta.uid and meta.creation_timestamp and meta.resource_version.isdigit()
    assert meta.namespace == "default" and meta.generation == 1
    fetched = core.read_namespaced_config_map("settings", "default")
    assert fetched.data == {"a": "1"}
    assert fetched.metadata.resource_version == meta.resource_version


def test_create_twice_is_a_409_already_exists(core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", configmap("twice"))
    with pytest.raises(client.ApiException) as e:
        core.create_namespaced_config_map("default", configmap("twice"))
    assert e.value.status == 409
    body = status(e)
    assert body["reason"] == "AlreadyExists"
    assert body["message"] == 'configmaps "twice" already exists'
    assert body["details"] == {"name": "twice", "kind": "configmaps"}


def test_get_missing_is_a_404_with_a_status_body(
    core: client.CoreV1Api, apps: client.AppsV1Api
) -> None:
    with pytest.raises(client.ApiException) as e:
        core.read_namespaced_pod("ghost", "default")
    assert e.value.status == 404
    assert status(e) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "ghost" not found',
        "reason": "NotFound",
        "details": {"name": "ghost", "kind": "pods"},
        "code": 404,
    }
    with pytest.raises(client.ApiException) as e:
        apps.read_namespaced_deployment("ghost", "default")
    assert status(e)["message"] == 'deployments.apps "ghost" not found'
    assert status(e)["details"]["group"] == "apps"


def test_create_in_a_missing_namespace_is_a_404(core: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as e:
        core.create_namespaced_config_map("nowhere", configmap("x"))
    assert e.value.status == 404
    assert status(e)["message"] == 'namespaces "nowhere" not found'


def test_invalid_objects_are_a_422(core: client.CoreV1Api, apps: client.AppsV1Api) -> None:
    with pytest.raises(client.ApiException) as e:
        core.create_namespaced_config_map("default", configmap("Bad_Name"))
    body = status(e)
    assert e.value.status == 422 and body["reason"] == "Invalid"
    assert body["message"].startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"'
    )
    assert body["details"]["causes"][0]["field"] == "metadata.name"

    deployment = make_deployment("web")
    deployment["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    with pytest.raises(client.ApiException) as e:
        apps.create_namespaced_deployment("default", deployment)
    assert e.value.status == 422
    assert status(e)["details"]["kind"] == "Deployment" and status(e)["details"]["group"] == "apps"
    assert "`selector` does not match template `labels`" in status(e)["message"]


def test_generate_name_makes_a_unique_name(core: client.CoreV1Api) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "run-"}}
    names = {core.create_namespaced_config_map("default", body).metadata.name for _ in range(3)}
    assert len(names) == 3 and all(n.startswith("run-") and len(n) == 9 for n in names)


def test_update_with_a_stale_resource_version_is_a_409(core: client.CoreV1Api) -> None:
    first = core.create_namespaced_config_map("default", configmap("cfg"))
    first.data = {"k": "v2"}
    second = core.replace_namespaced_config_map("cfg", "default", first)
    assert int(second.metadata.resource_version) > int(first.metadata.resource_version)
    first.data = {"k": "v3"}  # still carries the old resourceVersion
    with pytest.raises(client.ApiException) as e:
        core.replace_namespaced_config_map("cfg", "default", first)
    assert e.value.status == 409
    assert status(e)["reason"] == "Conflict"
    assert status(e)["message"] == (
        'Operation cannot be fulfilled on configmaps "cfg": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert core.read_namespaced_config_map("cfg", "default").data == {"k": "v2"}


def test_update_of_a_missing_object_is_a_404(core: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as e:
        core.replace_namespaced_config_map("absent", "default", configmap("absent"))
    assert e.value.status == 404


def test_an_update_that_changes_nothing_writes_nothing(
    core: client.CoreV1Api, kube_server: KubeAPIServer
) -> None:
    created = core.create_namespaced_config_map("default", configmap("same"))
    kube_server.stats.reset()
    again = core.replace_namespaced_config_map("same", "default", created)
    assert again.metadata.resource_version == created.metadata.resource_version
    assert kube_server.stats.writes == 1 and kube_server.stats.mutations == 0


def test_generation_moves_with_spec_not_metadata(apps: client.AppsV1Api) -> None:
    body = make_deployment("web")
    apps.create_namespaced_deployment("default", body)
    labelled = apps.patch_namespaced_deployment(
        "web", "default", {"metadata": {"labels": {"x": "y"}}}
    )
    assert labelled.metadata.generation == 1
    scaled = apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 3}})
    assert scaled.metadata.generation == 2


def test_status_goes_through_the_status_subresource(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_pod("default", pod("p", status={"phase": "Running"}))
    assert (
        created.status.phase == "Pending"
    )  # status on create is the server's, as on a real cluster
    ignored = core.patch_namespaced_pod("p", "default", {"status": {"phase": "Failed"}})
    assert ignored.status.phase == "Pending"
    running = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    updated = core.patch_namespaced_pod_status("p", "default", running)
    assert updated.status.phase == "Running" and updated.status.conditions[0].type == "Ready"
    relabel = core.patch_namespaced_pod_status("p", "default", {"metadata": {"labels": {"a": "b"}}})
    assert relabel.metadata.labels is None  # the status endpoint changes nothing but status


def test_pod_spec_is_immutable_but_images_may_change(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", pod("p"))
    changed = core.patch_namespaced_pod(
        "p", "default", {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}
    )
    assert changed.spec.containers[0].image == "app:2"
    with pytest.raises(client.ApiException) as e:
        core.patch_namespaced_pod("p", "default", {"spec": {"nodeName": "elsewhere"}})
    assert (
        e.value.status == 422
        and status(e)["details"]["causes"][0]["reason"] == "FieldValueForbidden"
    )


def test_list_is_namespaced_or_cluster_wide(core: client.CoreV1Api) -> None:
    core.create_namespace(make_namespace("team-a"))
    core.create_namespaced_config_map("default", configmap("one"))
    core.create_namespaced_config_map("team-a", configmap("two"))
    assert [c.metadata.name for c in core.list_namespaced_config_map("team-a").items] == ["two"]
    everywhere = core.list_config_map_for_all_namespaces()
    assert [(c.metadata.namespace, c.metadata.name) for c in everywhere.items] == [
        ("default", "one"),
        ("team-a", "two"),
    ]
    assert everywhere.metadata.resource_version.isdigit()


def test_list_pages_with_limit_and_continue(core: client.CoreV1Api) -> None:
    for i in range(5):
        core.create_namespaced_config_map("default", configmap(f"cm-{i}"))
    first = core.list_namespaced_config_map("default", limit=2)
    assert [c.metadata.name for c in first.items] == ["cm-0", "cm-1"]
    assert first.metadata.remaining_item_count == 3
    rest = core.list_namespaced_config_map("default", limit=10, _continue=first.metadata._continue)
    assert [c.metadata.name for c in rest.items] == ["cm-2", "cm-3", "cm-4"]
    assert rest.metadata._continue is None


def test_dry_run_writes_nothing(core: client.CoreV1Api) -> None:
    preview = core.create_namespaced_config_map("default", configmap("dry"), dry_run="All")
    assert preview.metadata.name == "dry"
    assert core.list_namespaced_config_map("default").items == []


def test_dynamic_client_crud(dynamic: DynamicClient) -> None:
    secrets = dynamic.resources.get(api_version="v1", kind="Secret")
    secrets.create(
        body={
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s"},
            "stringData": {"a": "b"},
        },
        namespace="default",
    )
    fetched = secrets.get(name="s", namespace="default")
    fetched.metadata.labels = {"tier": "x"}
    replaced = secrets.replace(body=fetched.to_dict(), namespace="default")
    assert replaced.to_dict()["metadata"]["labels"] == {"tier": "x"}
    # The server folds stringData into base64 data.
    assert replaced.to_dict()["data"] == {"a": "Yg=="} and "stringData" not in replaced.to_dict()
    namespaces = dynamic.resources.get(api_version="v1", kind="Namespace")
    names = [n.metadata.name for n in namespaces.get().items]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]


HOOK = {"name": "hook.example.org", "clientConfig": {"url": "https://hook.example.org"},
        "admissionReviewVersions": ["v1"], "sideEffects": "None"}


@pytest.mark.parametrize(("api_version", "kind", "name", "namespaced", "body"), [
    ("v1", "ResourceQuota", "pods", True, {"spec": {"hard": {"pods": "10"}}}),
    ("v1", "LimitRange", "cpu", True,
     {"spec": {"limits": [{"type": "Container", "default": {"cpu": "100m"}}]}}),
    ("autoscaling/v2", "HorizontalPodAutoscaler", "web", True, {"spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1, "maxReplicas": 3}}),
    ("storage.k8s.io/v1", "CSIDriver", "ebs.csi.aws.com", False,
     {"spec": {"attachRequired": True}}),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "v", False,
     {"webhooks": [HOOK]}),
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "m", False,
     {"webhooks": [HOOK]}),
    ("apiregistration.k8s.io/v1", "APIService", "v1beta1.metrics.k8s.io", False, {"spec": {
        "group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
        "versionPriority": 100, "service": {"name": "metrics-server",
                                            "namespace": "kube-system"}}}),
])
def test_built_in_kinds_a_cluster_configuration_installs(
    dynamic: DynamicClient, api_version: str, kind: str, name: str, namespaced: bool,
    body: dict,
) -> None:
    resource = dynamic.resources.get(api_version=api_version, kind=kind)
    where = {"namespace": "kube-system"} if namespaced else {}
    assert resource.namespaced is namespaced

    resource.create(body={"apiVersion": api_version, "kind": kind, "metadata": {"name": name},
                          **body}, **where)

    fetched = resource.get(name=name, **where).to_dict()
    assert {k: fetched[k] for k in body} == body
    assert [o.metadata.name for o in resource.get(**where).items] == [name]
