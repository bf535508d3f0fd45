"""The Eviction subresource and PodDisruptionBudgets: 201, 429, 500, as the real server answers."""

from __future__ import annotations

import json

import pytest
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_pdb, make_pod, make_replicaset
from kubernetes import client


def evict(
    core: client.CoreV1Api, name: str, namespace: str = "default", **options: object
) -> object:
    body = client.V1Eviction(
        metadata=client.V1ObjectMeta(name=name, namespace=namespace), **options
    )
    return core.create_namespaced_pod_eviction(name, namespace, body)


def pod_names(server: KubeAPIServer) -> list[str]:
    return [p["metadata"]["name"] for p in server.objects("v1", "Pod", "default")]


def test_evicting_a_pod_without_budget_deletes_it(
    kube_server: KubeAPIServer, core: client.CoreV1Api
) -> None:
    kube_server.seed(make_pod("p", labels={"app": "x"}))
    evict(core, "p")
    assert pod_names(kube_server) == []
    assert kube_server.stats.count("create", "pods/eviction") == 1


def test_min_available_refuses_with_429(
    kube_server: KubeAPIServer, core: client.CoreV1Api, policy
) -> None:
    kube_server.seed(make_pod("a", labels={"app": "x"}), make_pod("b", labels={"app": "x"}))
    policy.create_namespaced_pod_disruption_budget(
        "default", make_pdb("budget", match_labels={"app": "x"}, min_available=1)
    )
    status = policy.read_namespaced_pod_disruption_budget("budget", "default").status
    assert (status.current_healthy, status.desired_healthy, status.disruptions_allowed) == (2, 1, 1)

    evict(core, "a")
    with pytest.raises(client.ApiException) as e:
        evict(core, "b")
    assert e.value.status == 429
    body = json.loads(e.value.body)
    assert body["reason"] == "TooManyRequests"
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert body["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget budget needs 1 healthy pods and has 1 currently",
        }
    ]
    assert pod_names(kube_server) == ["b"]


def test_max_unavailable_counts_against_the_controller_scale(
    kube_server: KubeAPIServer, core: client.CoreV1Api, policy
) -> None:
    (rs,) = kube_server.seed(make_replicaset("rs", replicas=3, labels={"app": "x"}))
    kube_server.seed(*(make_pod(f"p{i}", labels={"app": "x"}, owners=[rs]) for i in range(3)))
    kube_server.seed(make_pdb("budget", match_labels={"app": "x"}, max_unavailable=1))
    evict(core, "p0")
    # Three expected, two left: one more would leave one of three, one below 3 - maxUnavailable.
    with pytest.raises(client.ApiException) as e:
        evict(core, "p1")
    assert e.value.status == 429
    status = policy.read_namespaced_pod_disruption_budget("budget", "default").status
    assert (status.expected_pods, status.desired_healthy, status.current_healthy) == (3, 2, 2)


def test_more_than_one_budget_is_a_500(kube_server: KubeAPIServer, core: client.CoreV1Api) -> None:
    kube_server.seed(
        make_pod("p", labels={"app": "x", "tier": "y"}),
        make_pdb("one", match_labels={"app": "x"}, min_available=0),
        make_pdb("two", match_labels={"tier": "y"}, min_available=0),
    )
    with pytest.raises(client.ApiException) as e:
        evict(core, "p")
    assert e.value.status == 500
    assert json.loads(e.value.body)["message"] == (
        "This pod has more than one PodDisruptionBudget, "
        "which the eviction subresource does not support."
    )
    assert pod_names(kube_server) == ["p"]


def test_pending_and_unready_pods(kube_server: KubeAPIServer, core: client.CoreV1Api) -> None:
    kube_server.seed(
        make_pod("ready", labels={"app": "x"}),
        make_pod("pending", labels={"app": "x"}, phase="Pending", ready=False),
        make_pod("unready", labels={"app": "x"}, ready=False),
        make_pdb("budget", match_labels={"app": "x"}, min_available=1),
    )
    evict(core, "pending")  # not running: no budget check
    evict(core, "unready")  # not healthy, and the budget is met without it
    with pytest.raises(client.ApiException) as e:
        evict(core, "ready")
    assert e.value.status == 429


def test_unhealthy_pods_need_always_allow_when_the_budget_is_not_met(
    kube_server: KubeAPIServer, core: client.CoreV1Api
) -> None:
    pdb = make_pdb("budget", match_labels={"app": "x"}, min_available=1)
    kube_server.seed(make_pod("sick", labels={"app": "x"}, ready=False), pdb)
    with pytest.raises(client.ApiException) as e:
        evict(core, "sick")
    assert e.value.status == 429
    pdb["spec"]["unhealthyPodEvictionPolicy"] = "AlwaysAllow"
    kube_server.seed(pdb)
    evict(core, "sick")
    assert pod_names(kube_server) == []


def test_dry_run_and_missing_pods(kube_server: KubeAPIServer, core: client.CoreV1Api) -> None:
    kube_server.seed(make_pod("p"))
    evict(core, "p", delete_options=client.V1DeleteOptions(dry_run=["All"]))
    assert pod_names(kube_server) == ["p"]
    with pytest.raises(client.ApiException) as e:
        evict(core, "ghost")
    assert e.value.status == 404
