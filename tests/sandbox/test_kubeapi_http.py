"""The HTTP boundary: bearer token, bounded and malformed bodies, content types, statistics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.kubeconfig import kubeconfig, write_kubeconfig
from kubernetes import client, config
from kubernetes.dynamic import DynamicClient


def configmap(name: str, data: dict[str, str] | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data or {}}


def test_requests_without_the_token_get_401(kube_server: KubeAPIServer, tmp_path: Path) -> None:
    wrong = kubeconfig(kube_server.url, "not-the-token", ["x"], ca_pem=kube_server.ca_pem)
    path = write_kubeconfig(tmp_path / "wrong", wrong)
    core = client.CoreV1Api(config.new_client_from_config(str(path), context="x"))
    with pytest.raises(client.ApiException) as e:
        core.list_namespace()
    assert e.value.status == 401
    assert json.loads(e.value.body) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }


def test_kubeconfig_has_a_context_per_name(kube_server: KubeAPIServer, tmp_path: Path) -> None:
    path = kube_server.write_kubeconfig(tmp_path / "kc", context_names=["cluster-1", "alias-1"])
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    contexts, active = config.list_kube_config_contexts(str(path))
    assert [c["name"] for c in contexts] == ["cluster-1", "alias-1"] and active[
        "name"
    ] == "cluster-1"
    for name in ("cluster-1", "alias-1"):
        core = client.CoreV1Api(config.new_client_from_config(str(path), context=name))
        assert core.read_namespace("default").metadata.name == "default"


def test_bodies_over_the_limit_get_413_and_the_connection_survives(tmp_path: Path) -> None:
    with KubeAPIServer(max_body_bytes=64 * 1024) as server:
        path = server.write_kubeconfig(tmp_path / "kc")
        core = client.CoreV1Api(config.new_client_from_config(str(path)))
        with pytest.raises(client.ApiException) as e:
            core.create_namespaced_config_map("default", configmap("big", {"blob": "x" * 100_000}))
        assert e.value.status == 413
        assert json.loads(e.value.body)["message"] == "Request entity too large: limit is 65536"
        assert (
            core.create_namespaced_config_map("default", configmap("small")).metadata.name
            == "small"
        )
        assert server.read("v1", "ConfigMap", "big", "default") is None


def test_malformed_json_is_a_400(dynamic: DynamicClient) -> None:
    configmaps = dynamic.resources.get(api_version="v1", kind="ConfigMap")
    with pytest.raises(client.ApiException) as e:
        # The client serializes NaN as the bare token NaN, which is not JSON.
        configmaps.create(
            body={**configmap("nan"), "data": {"x": float("nan")}}, namespace="default"
        )
    assert e.value.status == 400
    assert json.loads(e.value.body)["reason"] == "BadRequest"


def test_yaml_bodies_and_malformed_yaml(raw_call) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    code, body = raw_call(
        "POST",
        path,
        body="kind: ConfigMap\napiVersion: v1\nmetadata: {name: y}\n",
        content_type="application/yaml",
    )
    assert code == 201 and body["metadata"]["name"] == "y"
    code, body = raw_call("POST", path, body="metadata: {name: [", content_type="application/yaml")
    assert code == 400 and body["reason"] == "BadRequest"
    bomb = "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"
    code, body = raw_call("POST", path, body=bomb, content_type="application/yaml")
    assert code == 400  # aliases refused: expansion would be unbounded
    code, body = raw_call("POST", path, body="name=x", content_type="text/plain")
    assert code == 415 and body["reason"] == "UnsupportedMediaType"


def test_malformed_apply_body_is_a_400(dynamic: DynamicClient) -> None:
    configmaps = dynamic.resources.get(api_version="v1", kind="ConfigMap")
    with pytest.raises(client.ApiException) as e:
        configmaps.server_side_apply(
            body="metadata: {name: x", name="x", namespace="default", field_manager="t"
        )
    assert e.value.status == 400


def test_methods_are_checked(raw_call) -> None:
    code, body = raw_call("PUT", "/api/v1/namespaces/default/configmaps")
    assert code == 405 and body["reason"] == "MethodNotAllowed"


def test_stats_count_requests_by_verb_and_resource(
    kube_server: KubeAPIServer, core: client.CoreV1Api
) -> None:
    core.create_namespaced_config_map("default", configmap("c"))
    core.read_namespaced_config_map("c", "default")
    core.list_namespaced_config_map("default")
    core.patch_namespaced_config_map("c", "default", {"data": {}})  # changes nothing
    with pytest.raises(client.ApiException):
        core.read_namespaced_config_map("absent", "default")
    stats = kube_server.stats
    assert stats.by_verb == {"create": 1, "get": 2, "list": 1, "patch": 1}
    assert stats.count("get", "configmaps") == 2 and stats.count(resource="pods") == 0
    assert (stats.writes, stats.mutations) == (2, 1)
    assert [(r.verb, r.code) for r in stats.records][-1] == ("get", 404)
    stats.reset()
    assert stats.writes == 0 and stats.records == []
