"""What the emulator serves for kubectl, checked through the official client (no kubectl needed):
TLS with its own CA, OpenAPI v2/v3, strict field validation, watch, Table output, scale, logs,
self-subject reviews and protobuf request bodies."""

from __future__ import annotations

import base64
import ssl
import threading
import urllib.request
from pathlib import Path

import pytest
import yaml
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_pod
from clmgit_sandbox.kubeapi.openapi_pb import document as pb_document
from clmgit_sandbox.kubeapi.protobuf import MAGIC, decode
from kubernetes import client, watch


def deployment(name: str = "web", replicas: int = 2) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }


def test_https_with_the_kubeconfig_ca_and_plain_http_on_the_same_port(
    kube_server: KubeAPIServer, kubeconfig: Path
) -> None:
    config = yaml.safe_load(kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"].startswith("https://127.0.0.1:")
    ca = base64.b64decode(cluster["certificate-authority-data"])
    context = ssl.create_default_context(cadata=ca.decode())
    with urllib.request.urlopen(cluster["server"] + "/healthz", context=context) as answer:
        assert answer.read() == b"ok"
    with pytest.raises(urllib.error.URLError):  # a client without the CA does not trust it
        urllib.request.urlopen(cluster["server"] + "/healthz", context=ssl.create_default_context())
    with urllib.request.urlopen(kube_server.http_url + "/healthz") as answer:
        assert answer.read() == b"ok"


def test_openapi_v3_index_and_documents_name_every_kind(raw_call) -> None:
    code, index = raw_call("GET", "/openapi/v3")
    assert code == 200 and "apis/apps/v1" in index["paths"]
    url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
    assert "?hash=" in url
    code, doc = raw_call("GET", url.split("?")[0])
    schemas = doc["components"]["schemas"]
    assert schemas["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}]
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    replicas = schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]
    assert replicas["type"] == "integer"  # nullable type lists are gone


def test_openapi_v2_protobuf_encodes_the_swagger_document() -> None:
    encoded = pb_document({"swagger": "2.0", "info": {"title": "t", "version": "v"},
                           "paths": {}, "definitions": {"A": {"type": "object"}}})
    # Document{swagger=1:"2.0", info=2:{title, version}, paths=8:{}, definitions=9:{A}}
    assert encoded.startswith(b"\x0a\x032.0\x12\x06\x0a\x01t\x12\x01v")
    assert b"\x0a\x01A" in encoded and b"object" in encoded


def test_strict_field_validation_refuses_unknown_fields_and_warn_accepts(
    apps: client.AppsV1Api, raw_call
) -> None:
    bad = deployment()
    bad["spec"]["replicaz"] = 3
    path = "/apis/apps/v1/namespaces/default/deployments"
    code, body = raw_call("POST", path + "?fieldValidation=Strict", body=bad)
    assert code == 400 and body["message"] == 'strict decoding error: unknown field "spec.replicaz"'
    code, body = raw_call("POST", path + "?fieldValidation=Warn", body=bad)
    assert code == 201 and "replicaz" not in body["spec"]  # dropped, with a Warning header
    code, body = raw_call("POST", path + "?fieldValidation=Often", body=deployment("x"))
    assert code == 400


def test_watch_streams_changes_from_a_resource_version(
    core: client.CoreV1Api, kube_server: KubeAPIServer
) -> None:
    listed = core.list_namespaced_config_map("default")
    seen: list[tuple[str, str]] = []

    def follow() -> None:
        stream = watch.Watch().stream(core.list_namespaced_config_map, "default",
                                      resource_version=listed.metadata.resource_version,
                                      timeout_seconds=5)
        for event in stream:
            seen.append((event["type"], event["object"].metadata.name))
            if len(seen) == 3:
                break

    thread = threading.Thread(target=follow)
    thread.start()
    body = {"metadata": {"name": "a"}, "data": {"k": "v"}}
    core.create_namespaced_config_map("default", body)
    core.patch_namespaced_config_map("a", "default", {"data": {"k": "w"}})
    core.delete_namespaced_config_map("a", "default")
    thread.join(timeout=10)
    assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_a_too_old_resource_version_ends_the_watch_with_410(raw_call,
                                                            kube_server: KubeAPIServer) -> None:
    store = kube_server.cluster.store
    with store.lock:
        for n in range(store.history.maxlen + 5):  # type: ignore[operator]  # a bounded deque
            kube_server.seed({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "c", "namespace": "default"},
                              "data": {"n": str(n)}})
    code, text = raw_call("GET", "/api/v1/namespaces/default/configmaps?watch=1"
                                 "&resourceVersion=1001&timeoutSeconds=1")
    assert code == 200 and text["type"] == "ERROR" and text["object"]["code"] == 410


def test_table_output_has_the_printer_columns(raw_call, kube_server: KubeAPIServer) -> None:
    kube_server.seed(make_pod("p1", labels={"app": "a"}, node="n1"))
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    code, table = raw_call("GET", "/api/v1/namespaces/default/pods", accept=accept)
    assert code == 200 and table["kind"] == "Table"
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names[:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    row = table["rows"][0]
    assert row["cells"][:3] == ["p1", "1/1", "Running"]
    assert row["object"]["kind"] == "PartialObjectMetadata"


def test_scale_subresource_reads_and_writes_replicas(apps: client.AppsV1Api) -> None:
    apps.create_namespaced_deployment("default", deployment())
    scale = apps.read_namespaced_deployment_scale("web", "default")
    assert scale.spec.replicas == 2 and scale.status.selector == "app=web"
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 5}})
    assert apps.read_namespaced_deployment("web", "default").spec.replicas == 5
    with pytest.raises(client.ApiException) as e:
        apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": -1}})
    assert e.value.status == 400


def test_pod_logs_come_from_the_simulated_node(core: client.CoreV1Api,
                                               kube_server: KubeAPIServer) -> None:
    kube_server.seed(make_pod("p1", labels={"app": "a"}, node="node-1"))
    text = core.read_namespaced_pod_log("p1", "default")
    assert "started on node node-1" in text
    assert len(core.read_namespaced_pod_log("p1", "default", tail_lines=1).splitlines()) == 1


def test_self_subject_reviews_allow_everything(api_client: client.ApiClient) -> None:
    auth = client.AuthorizationV1Api(api_client)
    review = auth.create_self_subject_access_review(
        {"spec": {"resourceAttributes": {"verb": "delete", "resource": "pods"}}})
    assert review.status.allowed is True
    rules = auth.create_self_subject_rules_review({"spec": {"namespace": "default"}})
    assert rules.status.resource_rules[0].verbs == ["*"]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def test_protobuf_bodies_are_decoded(raw_call) -> None:
    # ConfigMap{metadata=1{name=1:"pb", labels=11{key, value}}, data=2{key:"a", value:"b"}}
    meta = _field(1, b"pb") + _field(3, b"") + _field(11, _field(1, b"app") + _field(2, b"x"))
    configmap = _field(1, meta) + _field(2, _field(1, b"a") + _field(2, b"b"))
    type_meta = _field(1, b"v1") + _field(2, b"ConfigMap")
    body = MAGIC + _field(1, type_meta) + _field(2, configmap)
    assert decode(body) == {"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "pb", "labels": {"app": "x"}},
                            "data": {"a": "b"}}
    code, created = raw_call("POST", "/api/v1/namespaces/default/configmaps", body=body,
                             content_type="application/vnd.kubernetes.protobuf")
    assert code == 201 and created["data"] == {"a": "b"}
    code, error = raw_call("POST", "/api/v1/namespaces/default/configmaps", body=b"k8s\x00\xff",
                           content_type="application/vnd.kubernetes.protobuf")
    assert code == 400
