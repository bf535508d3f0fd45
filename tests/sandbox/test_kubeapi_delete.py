"""Delete: responses, preconditions, finalizers, propagation through owner references."""

from __future__ import annotations

import json

import pytest
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import (
    make_namespace,
    make_pod,
    make_replicaset,
    owner_reference,
)
from kubernetes import client
from kubernetes.dynamic import DynamicClient

from tests.helpers.kube import must_read


def configmap(name: str, namespace: str = "default", **meta: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, **meta},
    }


@pytest.fixture
def family(kube_server: KubeAPIServer) -> dict[str, dict]:
    """A ReplicaSet owning two pods, one of which has a second (ConfigMap) owner."""
    (rs, other) = kube_server.seed(
        make_replicaset("rs", replicas=2, labels={"app": "x"}), configmap("other-owner")
    )
    pod_a = make_pod("a", labels={"app": "x"}, owners=[rs])
    pod_b = make_pod("b", labels={"app": "x"}, owners=[rs])
    pod_b["metadata"]["ownerReferences"].append(owner_reference(other, controller=False))
    kube_server.seed(pod_a, pod_b)
    return {"rs": rs, "other": other}


def pod_names(kube_server: KubeAPIServer) -> list[str]:
    return [p["metadata"]["name"] for p in kube_server.objects("v1", "Pod", "default")]


def test_delete_answers_with_status_or_with_the_object(
    core: client.CoreV1Api, kube_server: KubeAPIServer
) -> None:
    core.create_namespaced_config_map("default", configmap("c"))
    answer = core.delete_namespaced_config_map("c", "default")
    assert answer["status"] == "Success" and answer["details"]["kind"] == "configmaps"
    kube_server.seed(make_pod("p"))
    deleted = core.delete_namespaced_pod("p", "default", grace_period_seconds=30)
    assert isinstance(deleted, client.V1Pod) and deleted.metadata.name == "p"
    assert pod_names(kube_server) == []  # no kubelet to wait for: gone at once
    with pytest.raises(client.ApiException) as e:
        core.delete_namespaced_pod("p", "default")
    assert e.value.status == 404


def test_dry_run_delete_keeps_the_object(
    core: client.CoreV1Api, kube_server: KubeAPIServer
) -> None:
    core.create_namespaced_config_map("default", configmap("c"))
    core.delete_namespaced_config_map("c", "default", dry_run="All")
    assert kube_server.read("v1", "ConfigMap", "c", "default") is not None


def test_delete_preconditions(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_config_map("default", configmap("c"))
    stale = client.V1DeleteOptions(preconditions=client.V1Preconditions(resource_version="1"))
    with pytest.raises(client.ApiException) as e:
        core.delete_namespaced_config_map("c", "default", body=stale)
    assert e.value.status == 409 and "Precondition failed" in json.loads(e.value.body)["message"]
    fresh = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=created.metadata.uid))
    core.delete_namespaced_config_map("c", "default", body=fresh)


def test_background_deletes_dependents_without_another_owner(
    family: dict, apps: client.AppsV1Api, kube_server: KubeAPIServer
) -> None:
    apps.delete_namespaced_replica_set("rs", "default", propagation_policy="Background")
    assert pod_names(kube_server) == ["b"]
    survivor = must_read(kube_server, "v1", "Pod", "b", "default")
    assert [r["name"] for r in survivor["metadata"]["ownerReferences"]] == ["other-owner"]


def test_orphan_keeps_dependents_and_drops_their_owner_reference(
    family: dict, apps: client.AppsV1Api, kube_server: KubeAPIServer
) -> None:
    answer = apps.delete_namespaced_replica_set("rs", "default", propagation_policy="Orphan")
    assert (
        answer["metadata"]["finalizers"] == ["orphan"] and answer["metadata"]["deletionTimestamp"]
    )
    assert kube_server.read("apps/v1", "ReplicaSet", "rs", "default") is None
    assert pod_names(kube_server) == ["a", "b"]
    assert "ownerReferences" not in must_read(kube_server, "v1", "Pod", "a", "default")["metadata"]


def test_foreground_answers_with_the_marked_owner_then_removes_all(
    family: dict, dynamic: DynamicClient, kube_server: KubeAPIServer
) -> None:
    replicasets = dynamic.resources.get(api_version="apps/v1", kind="ReplicaSet")
    answer = replicasets.delete(name="rs", namespace="default", propagation_policy="Foreground")
    assert answer.metadata.deletionTimestamp and answer.metadata.finalizers == [
        "foregroundDeletion"
    ]
    assert kube_server.read("apps/v1", "ReplicaSet", "rs", "default") is None
    assert pod_names(kube_server) == ["b"]


def test_jobs_orphan_their_pods_by_default(
    kube_server: KubeAPIServer, api_client: client.ApiClient
) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}
            }
        },
    }
    (stored,) = kube_server.seed(job)
    kube_server.seed(make_pod("j-1", owners=[stored]))
    client.BatchV1Api(api_client).delete_namespaced_job("j", "default")
    assert pod_names(kube_server) == ["j-1"]


def test_finalizers_hold_the_object_until_removed(
    core: client.CoreV1Api, kube_server: KubeAPIServer
) -> None:
    core.create_namespaced_config_map("default", configmap("held", finalizers=["example.com/hold"]))
    answer = core.delete_namespaced_config_map("held", "default")
    assert answer["metadata"]["deletionTimestamp"]
    assert core.read_namespaced_config_map("held", "default").metadata.deletion_timestamp
    core.patch_namespaced_config_map("held", "default", {"metadata": {"finalizers": None}})
    assert kube_server.read("v1", "ConfigMap", "held", "default") is None


def test_deleting_a_namespace_deletes_its_contents(
    core: client.CoreV1Api, kube_server: KubeAPIServer
) -> None:
    core.create_namespace(make_namespace("doomed"))
    core.create_namespaced_config_map("doomed", configmap("c", namespace="doomed"))
    kube_server.seed(make_pod("p", namespace="doomed"))
    answer = core.delete_namespace("doomed")
    assert answer["status"]["phase"] == "Terminating"
    assert kube_server.read("v1", "Namespace", "doomed") is None
    assert (
        kube_server.objects("v1", "ConfigMap", "doomed") == []
        and kube_server.objects("v1", "Pod", "doomed") == []
    )


def test_delete_collection_by_label(core: client.CoreV1Api, kube_server: KubeAPIServer) -> None:
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        core.create_namespaced_config_map("default", configmap(name, labels={"tier": tier}))
    core.delete_collection_namespaced_config_map("default", label_selector="tier=x")
    assert [c["metadata"]["name"] for c in kube_server.objects("v1", "ConfigMap", "default")] == [
        "c"
    ]
