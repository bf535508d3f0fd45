"""Field ownership as the API server records it: the entries of `Update` writes (what kubectl's
client-side apply leaves), writes that set `metadata.managedFields` themselves (kubectl's and
clmgit's migration to server-side apply), and explicit nulls in a server-side apply."""

from __future__ import annotations

import copy
from typing import Any

from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_deployment
from kubernetes import client

from tests.helpers.kube import RawCall, must_read

APPLY = "application/apply-patch+yaml"
JSON_PATCH = "application/json-patch+json"
PATH = "/api/v1/namespaces/default/configmaps"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def config_map(**data: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "one", "namespace": "default"}, "data": data}


def entries(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"]["managedFields"]}


def apply(raw_call: RawCall, body: dict[str, Any], manager: str = "clmgit") -> tuple[int, Any]:
    return raw_call("PATCH", f"{PATH}/one?fieldManager={manager}", body=body, content_type=APPLY)


def test_a_create_owns_the_maps_it_adds_whole_as_the_server_records_it(
    core: client.CoreV1Api, kube_server: KubeAPIServer
) -> None:
    body = config_map(a="1")
    body["metadata"]["annotations"] = {LAST_APPLIED: "{}"}
    core.create_namespaced_config_map("default", body, field_manager="kubectl-client-side-apply")

    stored = must_read(kube_server, "v1", "ConfigMap", "one", "default")
    assert entries(stored) == {("kubectl-client-side-apply", "Update"): {
        "f:data": {".": {}, "f:a": {}},
        "f:metadata": {"f:annotations": {".": {}, f"f:{LAST_APPLIED}": {}}}}}


def test_a_create_does_not_own_the_structs_go_always_has(apps: client.AppsV1Api,
                                                          kube_server: KubeAPIServer) -> None:
    apps.create_namespaced_deployment("default", make_deployment("web"), field_manager="kubectl")

    fields = entries(must_read(kube_server, "apps/v1", "Deployment", "web", "default"))
    spec = fields["kubectl", "Update"]["f:spec"]
    assert "." not in spec and "." not in spec["f:template"]
    assert "." in spec["f:template"]["f:metadata"]["f:labels"]  # a map: added whole


def test_a_json_patch_of_managed_fields_replaces_them_and_its_own_change_is_recorded(
    raw_call: RawCall, core: client.CoreV1Api, kube_server: KubeAPIServer
) -> None:
    body = config_map(a="1")
    body["metadata"]["annotations"] = {LAST_APPLIED: "{}"}
    core.create_namespaced_config_map("default", body, field_manager="kubectl-client-side-apply")
    live = must_read(kube_server, "v1", "ConfigMap", "one", "default")
    migrated = [{**live["metadata"]["managedFields"][0], "manager": "clmgit", "operation": "Apply",
                 "fieldsV1": {"f:data": {".": {}, "f:a": {}},
                              "f:metadata": {"f:annotations": {f"f:{LAST_APPLIED}": {}}}}}]
    patch = [{"op": "replace", "path": "/metadata/managedFields", "value": migrated},
             {"op": "replace", "path": "/metadata/resourceVersion",
              "value": live["metadata"]["resourceVersion"]},
             {"op": "remove", "path": "/metadata/annotations/" + LAST_APPLIED.replace("/", "~1")}]

    status, answer = raw_call("PATCH", f"{PATH}/one?fieldManager=clmgit", body=patch,
                              content_type=JSON_PATCH)

    assert status == 200, answer
    assert "annotations" not in answer["metadata"]
    # The given entries replace the stored ones; the removal this patch made is taken from
    # them too, and an Update entry that would own nothing is not written.
    assert entries(answer) == {("clmgit", "Apply"): {"f:data": {".": {}, "f:a": {}}}}


def test_a_managed_fields_patch_on_a_stale_resource_version_is_a_conflict(
    raw_call: RawCall, core: client.CoreV1Api
) -> None:
    core.create_namespaced_config_map("default", config_map(a="1"))
    core.patch_namespaced_config_map("one", "default", {"data": {"a": "2"}})
    patch = [{"op": "replace", "path": "/metadata/managedFields", "value": []},
             {"op": "replace", "path": "/metadata/resourceVersion", "value": "1"}]

    status, answer = raw_call("PATCH", f"{PATH}/one", body=patch, content_type=JSON_PATCH)

    assert (status, answer["reason"]) == (409, "Conflict")


def test_server_side_apply_never_stores_a_null(raw_call: RawCall,
                                               kube_server: KubeAPIServer) -> None:
    status, created = apply(raw_call, config_map(a="1", b=None))

    assert status == 201, created
    stored = must_read(kube_server, "v1", "ConfigMap", "one", "default")
    assert stored["data"] == {"a": "1"}
    assert entries(stored)["clmgit", "Apply"] == {"f:data": {"f:a": {}}}


def test_a_null_for_a_field_the_applier_owns_removes_it(raw_call: RawCall,
                                                        kube_server: KubeAPIServer) -> None:
    apply(raw_call, config_map(a="1", b="2"))

    status, answer = apply(raw_call, config_map(a="1", b=None))

    assert status == 200, answer
    assert must_read(kube_server, "v1", "ConfigMap", "one", "default")["data"] == {"a": "1"}


def test_a_null_for_a_field_another_manager_owns_leaves_it(raw_call: RawCall,
                                                           kube_server: KubeAPIServer) -> None:
    apply(raw_call, config_map(b="2"), manager="someone-else")
    before = copy.deepcopy(must_read(kube_server, "v1", "ConfigMap", "one", "default"))

    status, answer = apply(raw_call, config_map(a="1", b=None))

    assert status == 200, answer
    after = must_read(kube_server, "v1", "ConfigMap", "one", "default")
    assert after["data"] == {"a": "1", "b": "2"}
    assert entries(after)["someone-else", "Apply"] == entries(before)["someone-else", "Apply"]


def test_scheme_defaults_are_owned_by_an_update_not_by_an_apply_and_come_back(
    apps: client.AppsV1Api, raw_call: RawCall, kube_server: KubeAPIServer
) -> None:
    apps.create_namespaced_deployment("default", make_deployment("web"), field_manager="kubectl")
    created = must_read(kube_server, "apps/v1", "Deployment", "web", "default")
    assert created["spec"]["revisionHistoryLimit"] == 10
    assert "f:revisionHistoryLimit" in entries(created)["kubectl", "Update"]["f:spec"]

    body = make_deployment("api")
    path = "/apis/apps/v1/namespaces/default/deployments/api?fieldManager=clmgit"
    status, applied = raw_call("PATCH", path, body=body, content_type=APPLY)
    assert status == 201, applied
    assert applied["spec"]["progressDeadlineSeconds"] == 600
    assert "f:progressDeadlineSeconds" not in entries(applied)["clmgit", "Apply"]["f:spec"]

    body["spec"]["revisionHistoryLimit"] = 3
    raw_call("PATCH", path, body=body, content_type=APPLY)
    del body["spec"]["revisionHistoryLimit"]  # pruned, and defaulted again
    status, pruned = raw_call("PATCH", path, body=body, content_type=APPLY)
    assert (status, pruned["spec"]["revisionHistoryLimit"]) == (200, 10)
