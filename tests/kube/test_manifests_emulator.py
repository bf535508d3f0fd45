"""Manifests and deletions (the engine's step 7) through the real adapter against the emulator."""

from __future__ import annotations

from typing import Any

import pytest
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_crd, make_deployment, make_pod, make_replicaset

from clmgit.adapters.kube import KubeAPI
from clmgit.config.deletions import Deletion
from clmgit.config.render import Component, ManifestObject
from clmgit.engine.kube import KubeConflict
from clmgit.engine.manifests import (
    DeletedObject,
    ObjectChange,
    apply_deletions,
    apply_manifests,
    ordered,
)
from clmgit.errors import ApplyError
from tests.helpers.kube import must_read


def component(name: str, *objects: dict[str, Any]) -> Component:
    return Component(name, tuple(ManifestObject(f"cluster/manifests/{name}/x.yaml", i, o)
                                 for i, o in enumerate(objects)))


def config_map(name: str, namespace: str | None = "default", **data: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
CRD = make_crd("example.org", "Widget")
WIDGET = {"apiVersion": "example.org/v1", "kind": "Widget",
          "metadata": {"name": "w", "namespace": "team"}, "spec": {"size": 1}}


def test_first_apply_creates_and_the_same_manifests_again_change_nothing(
    kube: KubeAPI, server: KubeAPIServer
) -> None:
    components = [component("a", config_map("one", a="1"), NAMESPACE),
                  component("b", make_deployment("web", namespace="team"))]

    first = apply_manifests(kube, components)
    versions = {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                for o in server.objects("v1", "ConfigMap", "default")}
    server.stats.reset()
    second = apply_manifests(kube, components)

    assert [c.action for c in first] == ["created"] * 3
    assert [c.action for c in second] == ["unchanged"] * 3
    assert server.stats.mutations == 0
    assert {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
            for o in server.objects("v1", "ConfigMap", "default")} == versions
    managers = must_read(server, "v1", "ConfigMap", "one", "default")["metadata"]["managedFields"]
    assert {m["manager"] for m in managers} == {"clmgit"}


def test_a_changed_manifest_is_configured_and_a_dropped_field_goes(
    kube: KubeAPI, server: KubeAPIServer
) -> None:
    apply_manifests(kube, [component("a", config_map("one", a="1", b="2"))])

    (change,) = apply_manifests(kube, [component("a", config_map("one", a="9"))])

    assert change == ObjectChange("configured", "ConfigMap", "default", "one", "a")
    assert must_read(server, "v1", "ConfigMap", "one", "default")["data"] == {"a": "9"}


def test_namespaces_and_crds_come_before_what_needs_them(
    kube: KubeAPI, server: KubeAPIServer
) -> None:
    components = [component("a-app", WIDGET), component("z-base", CRD, NAMESPACE)]

    changes = apply_manifests(kube, components)

    assert [c.kind for c in changes] == ["Namespace", "CustomResourceDefinition", "Widget"]
    assert [c.component for c in changes] == ["z-base", "z-base", "a-app"]
    assert must_read(server, "example.org/v1", "Widget", "w", "team")["spec"] == {"size": 1}
    assert [m.name for _, m in ordered(components)] == ["team", "widgets.example.org", "w"]


def test_a_dry_run_reports_and_changes_nothing(kube: KubeAPI, server: KubeAPIServer) -> None:
    apply_manifests(kube, [component("a", config_map("one", a="1"))])
    server.stats.reset()

    changes = apply_manifests(kube, [component("a", config_map("one", a="2"),
                                               config_map("two"), CRD, NAMESPACE, WIDGET)],
                              dry_run=True)

    assert [(c.action, c.name) for c in changes] == [
        ("configured", "one"), ("created", "two"), ("created", "widgets.example.org"),
        ("created", "team"), ("created", "w")]
    assert server.stats.mutations == 0
    assert must_read(server, "v1", "ConfigMap", "one", "default")["data"] == {"a": "1"}


def test_a_dry_run_counts_objects_in_a_namespace_it_would_create(
        kube: KubeAPI, server: KubeAPIServer) -> None:
    # The server cannot dry-run an object into a namespace that does not exist yet.
    changes = apply_manifests(kube, [component("a", NAMESPACE, config_map("c", "team"))],
                              dry_run=True)
    assert [(c.action, c.kind, c.name) for c in changes] == [
        ("created", "Namespace", "team"), ("created", "ConfigMap", "c")]
    assert server.read("v1", "Namespace", "team") is None


def test_a_field_owned_by_another_manager_is_a_conflict_not_forced(
    kube: KubeAPI, server: KubeAPIServer, apply_as_human: Any
) -> None:
    apply_manifests(kube, [component("a", config_map("one", a="1"))])
    apply_as_human({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "one", "namespace": "default"}, "data": {"a": "human"}})

    with pytest.raises(KubeConflict, match="ConfigMap default/one"):
        apply_manifests(kube, [component("a", config_map("one", a="2"))])
    assert must_read(server, "v1", "ConfigMap", "one", "default")["data"] == {"a": "human"}


def test_a_kind_nothing_serves_or_defines_fails_by_name(kube: KubeAPI) -> None:
    with pytest.raises(ApplyError, match="serves no Widget"):
        apply_manifests(kube, [component("a", WIDGET)])


# --- deletions ------------------------------------------------------------------------------


@pytest.fixture
def seeded(server: KubeAPIServer) -> KubeAPIServer:
    server.seed(config_map("a", "kube-system"), config_map("b", "kube-system"),
                {**config_map("c", "kube-system"), "metadata": {
                    "name": "c", "namespace": "kube-system", "labels": {"app": "x"}}},
                {**config_map("d", "kube-system"), "metadata": {
                    "name": "d", "namespace": "kube-system", "labels": {"app": "x", "v": "2"}}})
    return server


def names(server: KubeAPIServer, namespace: str = "kube-system") -> list[str]:
    return [o["metadata"]["name"] for o in server.objects("v1", "ConfigMap", namespace)]


def test_deletions_by_name_selector_and_labels_in_kube_system_by_default(
    kube: KubeAPI, seeded: KubeAPIServer
) -> None:
    deleted = apply_deletions(kube, [
        Deletion(kind="configmap", name="a"),
        Deletion(kind="ConfigMap", namespace="kube-system", labels={"app": "x", "v": "2"}),
        Deletion(kind="configmaps", selector="app in (x)"),
    ])

    assert deleted == [DeletedObject("ConfigMap", "kube-system", n) for n in ("a", "d", "c")]
    assert names(seeded) == ["b"]


def test_missing_objects_and_unknown_kinds_are_no_ops(kube: KubeAPI, seeded: KubeAPIServer) -> None:
    seeded.stats.reset()
    deleted = apply_deletions(kube, [Deletion(kind="ConfigMap", name="nope"),
                                     Deletion(kind="Widget", name="w"),
                                     Deletion(kind="ConfigMap", selector="app=none")])
    assert deleted == [] and seeded.stats.mutations == 0


def test_a_dry_run_lists_what_would_go_and_deletes_nothing(
    kube: KubeAPI, seeded: KubeAPIServer
) -> None:
    deleted = apply_deletions(kube, [Deletion(kind="ConfigMap", selector="app=x")], dry_run=True)
    assert [d.name for d in deleted] == ["c", "d"]
    assert names(seeded) == ["a", "b", "c", "d"]


def test_has_owner_and_propagation_policy(kube: KubeAPI, server: KubeAPIServer) -> None:
    owner = server.seed(make_replicaset("rs", namespace="kube-system", labels={"app": "p"}))[0]
    server.seed(make_pod("owned", namespace="kube-system", labels={"app": "p"}, owners=[owner]),
                make_pod("lonely", namespace="kube-system", labels={"app": "p"}))

    deleted = apply_deletions(kube, [Deletion(kind="Pod", labels={"app": "p"}, has_owner=False)])
    assert [d.name for d in deleted] == ["lonely"]

    apply_deletions(kube, [Deletion(kind="ReplicaSet", name="rs", propagation_policy="Orphan",
                                    grace_period_seconds=0)])
    (pod,) = server.objects("v1", "Pod", "kube-system")
    assert pod["metadata"]["name"] == "owned" and not pod["metadata"].get("ownerReferences")
