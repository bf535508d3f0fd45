"""The drain and its SLA (docs/explanation/reconcile.md) against the emulator, on a fake clock:
eviction through the Eviction API, PodDisruptionBudgets, and force-deletion only when the SLA
allows."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import cast

import pytest
from clmgit_sandbox.doubles import FakeClock
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_node, make_pdb, make_pod, make_replicaset

from clmgit.adapters.kube import KubeAPI
from clmgit.engine import kubeobjects
from clmgit.engine.drain import (
    DRAIN_START,
    DRAINING,
    LAST_FORCED,
    LIFECYCLE_LABEL,
    DrainSettings,
    DrainStuck,
    Node,
    drain_node,
    drain_settings,
)
from clmgit.errors import ConfigError
from clmgit.model import Cluster, NodePool
from tests.helpers.kube import must_read

OTHER = drain_settings(Cluster(id="c"), "default")  # the "other" column: grace 2h, pods 8h


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def protected(server: KubeAPIServer, clock: FakeClock) -> KubeAPIServer:
    """Node n1 with pod a-1 and node n2 with a-2; a budget wants both Ready: no eviction."""
    server.seed(make_node("n1", provider_id="aws:///eu-central-1a/i-1"),
                make_node("n2", provider_id="aws:///eu-central-1b/i-2"))
    rs = server.seed(make_replicaset("a", labels={"app": "a"}, replicas=2))[0]
    old = stamp(clock.now() - timedelta(hours=100))
    server.seed(make_pod("a-1", node="n1", labels={"app": "a"}, owners=[rs], created=old),
                make_pod("a-2", node="n2", labels={"app": "a"}, owners=[rs], created=old),
                make_pdb("a", match_labels={"app": "a"}, min_available=2))
    return server


def node(server: KubeAPIServer, name: str) -> Node:
    return Node.from_api(cast(kubeobjects.Node, must_read(server, "v1", "Node", name)))


def reborn(server: KubeAPIServer, pod: dict, when: datetime) -> None:
    """The pod again, created at `when` (a creationTimestamp cannot change in place)."""
    server.remove("v1", "Pod", pod["metadata"]["name"], "default")
    for key in ("uid", "resourceVersion", "managedFields"):
        pod["metadata"].pop(key, None)
    pod["metadata"]["creationTimestamp"] = stamp(when)
    server.seed(pod)


def watch(server: KubeAPIServer, clock: FakeClock, pod: str) -> list[tuple[datetime, bool]]:
    """(time, whether `pod` exists) at every sleep of the drain."""
    seen: list[tuple[datetime, bool]] = []
    clock.on_sleep = lambda c: seen.append(
        (c.now(), server.read("v1", "Pod", pod, "default") is not None))
    return seen


def test_a_protected_pod_waits_for_the_grace_period_then_is_force_deleted(
    kube: KubeAPI, protected: KubeAPIServer, clock: FakeClock
) -> None:
    start = clock.now()
    seen = watch(protected, clock, "a-1")

    drain_node(kube, node(protected, "n1"), OTHER, clock=clock)

    before = [present for when, present in seen if when < start + OTHER.grace_period]
    assert before and all(before)  # polled, refused (429), kept, for the whole grace period
    assert protected.read("v1", "Pod", "a-1", "default") is None
    assert clock.now() - start < OTHER.grace_period + OTHER.poll_interval * 2
    n1 = must_read(protected, "v1", "Node", "n1")["metadata"]
    assert n1["labels"][LIFECYCLE_LABEL] == DRAINING
    assert n1["annotations"][DRAIN_START] == stamp(start)
    assert n1["annotations"][LAST_FORCED] >= stamp(start + OTHER.grace_period)
    assert protected.read("v1", "Pod", "a-2", "default") is not None


def test_a_pod_younger_than_the_minimum_lifetime_is_never_force_deleted(
    kube: KubeAPI, protected: KubeAPIServer, clock: FakeClock
) -> None:
    pod = must_read(protected, "v1", "Pod", "a-1", "default")
    born = clock.now() - timedelta(hours=1)
    reborn(protected, pod, born)
    seen = watch(protected, clock, "a-1")

    drain_node(kube, node(protected, "n1"), OTHER, clock=clock)

    young = [present for when, present in seen if when < born + OTHER.min_pod_lifetime]
    assert young and all(young)  # well past the grace period, still young: kept
    assert any(when > born + OTHER.grace_period for when, _ in seen)
    assert protected.read("v1", "Pod", "a-1", "default") is None


def test_young_siblings_hold_back_the_force(
    kube: KubeAPI, protected: KubeAPIServer, clock: FakeClock
) -> None:
    start = clock.now()
    sibling = must_read(protected, "v1", "Pod", "a-2", "default")
    reborn(protected, sibling, start + timedelta(hours=2))  # a replacement, Ready: 1h to wait
    seen = watch(protected, clock, "a-1")

    drain_node(kube, node(protected, "n1"), OTHER, clock=clock)

    gone_at = min(when for when, present in seen if not present)
    assert gone_at >= start + timedelta(hours=3) > start + OTHER.grace_period


def test_mirror_daemonset_and_finished_pods_stay_and_others_are_evicted(
    kube: KubeAPI, server: KubeAPIServer, clock: FakeClock
) -> None:
    server.seed(make_node("n1"))
    ds = server.seed({"apiVersion": "apps/v1", "kind": "DaemonSet",
                      "metadata": {"name": "ds", "namespace": "default"},
                      "spec": {"selector": {"matchLabels": {"d": "s"}}, "template": {
                          "metadata": {"labels": {"d": "s"}},
                          "spec": {"containers": [{"name": "c", "image": "i"}]}}}})[0]
    server.seed(make_pod("mirror", node="n1", annotations={"kubernetes.io/config.mirror": "x"}),
                make_pod("daemon", node="n1", owners=[ds]),
                make_pod("done", node="n1", phase="Succeeded", ready=False),
                make_pod("plain", node="n1"), make_pod("elsewhere", node="n2"))

    drain_node(kube, node(server, "n1"), OTHER, clock=clock)

    left = {p["metadata"]["name"] for p in server.objects("v1", "Pod")}
    assert left == {"mirror", "daemon", "done", "elsewhere"}
    assert clock.sleeps == []


def test_a_drain_that_cannot_finish_gives_up_and_the_next_run_keeps_its_clock(
    kube: KubeAPI, protected: KubeAPIServer, clock: FakeClock
) -> None:
    never = DrainSettings(**{**OTHER.__dict__, "grace_period": timedelta(0),
                             "min_pod_lifetime": timedelta(hours=1)})
    start = clock.now()
    reborn(protected, must_read(protected, "v1", "Pod", "a-1", "default"),
           start + timedelta(days=9))

    with pytest.raises(DrainStuck, match="default/a-1"):
        drain_node(kube, node(protected, "n1"), never, clock=clock)
    clock.advance(3600)
    with pytest.raises(DrainStuck):
        drain_node(kube, node(protected, "n1"), never, clock=clock)

    annotations = must_read(protected, "v1", "Node", "n1")["metadata"]["annotations"]
    assert annotations[DRAIN_START] == stamp(start)
    assert must_read(protected, "v1", "Node", "n1")["spec"]["unschedulable"] is True


# --- settings -------------------------------------------------------------------------------


def test_settings_follow_the_environment_and_pool_items_win() -> None:
    pool = NodePool(name="p", profile="w", config_items={"drain_grace_period": "10m"})
    cluster = Cluster(id="c", environment="production", node_pools=(pool,),
                      config_items={"drain_grace_period": "3h", "drain_poll_interval": "1m30s",
                                    "rolling_update_surge": "3"})

    on_pool = drain_settings(cluster, "p")
    removed = drain_settings(cluster, "gone")

    assert on_pool.grace_period == timedelta(minutes=10)
    assert removed.grace_period == timedelta(hours=3)
    assert on_pool.min_pod_lifetime == timedelta(hours=72)  # production default
    assert on_pool.min_unhealthy_sibling_lifetime == timedelta(hours=6)
    assert on_pool.poll_interval == timedelta(seconds=90) and on_pool.surge == 3
    assert OTHER.min_pod_lifetime == timedelta(hours=8) and OTHER.surge == 1
    assert OTHER.min_unhealthy_sibling_lifetime == timedelta(hours=1)


@pytest.mark.parametrize("items", [{"drain_grace_period": "soon"},
                                   {"drain_poll_interval": "5 m"},
                                   {"rolling_update_surge": "0"}])
def test_bad_settings_are_refused_by_name(items: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=next(iter(items))):
        drain_settings(Cluster(id="c", config_items=items), "default")
