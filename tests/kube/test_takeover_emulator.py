"""Objects kubectl applied client-side (as CLM applies every manifest), taken over by the real
adapter against the emulator: the field ownership moves to clmgit, nothing else does."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_deployment
from kubernetes import client

from clmgit.adapters.kube import KubeAPI
from clmgit.config.render import Component, ManifestObject
from clmgit.engine.kube import KubeConflict
from clmgit.engine.manifests import ObjectChange, apply_manifests
from clmgit.engine.takeover import CSA_MANAGER, LAST_APPLIED
from tests.helpers.kube import RawCall, must_read

SETTINGS: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "default", "labels": {"app": "x"}},
            "data": {"level": "info", "legacy": "yes"}}
WEB = make_deployment("web", replicas=2)


def component(*objects: dict[str, Any]) -> list[Component]:
    return [Component("platform", tuple(ManifestObject("cluster/manifests/platform/x.yaml", i, o)
                                        for i, o in enumerate(objects)))]


@pytest.fixture
def clm_apply(raw_call: RawCall) -> Callable[[dict[str, Any]], None]:
    """Create objects as CLM's client-side apply does: the last-applied annotation holding the
    manifest, written by the field manager `kubectl-client-side-apply`; the server records it."""

    def create(obj: dict[str, Any]) -> None:
        body = copy.deepcopy(obj)
        body["metadata"].setdefault("annotations", {})[LAST_APPLIED] = json.dumps(obj)
        plural = {"ConfigMap": "configmaps", "Deployment": "deployments"}[obj["kind"]]
        base = "/api/v1" if obj["apiVersion"] == "v1" else f"/apis/{obj['apiVersion']}"
        status, answer = raw_call("POST", f"{base}/namespaces/default/{plural}"
                                  f"?fieldManager={CSA_MANAGER}", body=body,
                                  content_type="application/json")
        assert status == 201, answer

    return create


def managers(server: KubeAPIServer, kind: str = "ConfigMap",
             name: str = "settings") -> set[tuple[str, str]]:
    version = "v1" if kind == "ConfigMap" else "apps/v1"
    obj = must_read(server, version, kind, name, "default")
    return {(e["manager"], e["operation"]) for e in obj["metadata"]["managedFields"]}


def test_unchanged_manifests_are_taken_over_unchanged(kube: KubeAPI, server: KubeAPIServer,
                                                      clm_apply: Any) -> None:
    clm_apply(SETTINGS)
    clm_apply(WEB)
    before = must_read(server, "apps/v1", "Deployment", "web", "default")

    changes = apply_manifests(kube, component(SETTINGS, WEB))

    assert [(c.action, c.taken_from) for c in changes] == [("unchanged", (CSA_MANAGER,))] * 2
    after = must_read(server, "apps/v1", "Deployment", "web", "default")
    assert after["spec"] == before["spec"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    assert LAST_APPLIED not in (after["metadata"].get("annotations") or {})
    assert managers(server) == {("clmgit", "Apply")}
    assert managers(server, "Deployment", "web") == {("clmgit", "Apply")}
    # Taken over once: the next run finds nothing to migrate and nothing to write.
    server.stats.reset()
    assert [c.taken_from for c in apply_manifests(kube, component(SETTINGS, WEB))] == [(), ()]
    assert server.stats.mutations == 0


def test_after_the_takeover_a_changed_value_applies_and_a_dropped_key_goes(
    kube: KubeAPI, server: KubeAPIServer, clm_apply: Any
) -> None:
    clm_apply(SETTINGS)
    changed = copy.deepcopy(SETTINGS)
    changed["data"] = {"level": "debug"}

    (change,) = apply_manifests(kube, component(changed))

    assert change == ObjectChange("configured", "ConfigMap", "default", "settings", "platform",
                                  taken_from=(CSA_MANAGER,))
    assert must_read(server, "v1", "ConfigMap", "settings", "default")["data"] == {"level": "debug"}


@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry-run"])
def test_a_field_another_manager_owns_still_conflicts_and_is_not_taken(
    kube: KubeAPI, server: KubeAPIServer, clm_apply: Any, apps: client.AppsV1Api, dry_run: bool
) -> None:
    clm_apply(WEB)
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 5}},
                                           field_manager="hpa-controller")
    wanted = copy.deepcopy(WEB)
    wanted["spec"]["replicas"] = 3

    with pytest.raises(KubeConflict, match='"hpa-controller".*spec.replicas') as e:
        apply_manifests(kube, component(wanted), dry_run=dry_run)

    assert e.value.managers == ("hpa-controller",)
    assert must_read(server, "apps/v1", "Deployment", "web", "default")["spec"]["replicas"] == 5
    assert ("hpa-controller", "Update") in managers(server, "Deployment", "web")


def test_a_dry_run_plans_the_takeover_and_writes_nothing(
    kube: KubeAPI, server: KubeAPIServer, clm_apply: Any
) -> None:
    clm_apply(SETTINGS)
    changed = copy.deepcopy(SETTINGS)
    changed["data"]["level"] = "debug"
    dropped = copy.deepcopy(SETTINGS)
    del dropped["data"]["legacy"]
    server.stats.reset()

    plans = [apply_manifests(kube, component(m), dry_run=True)[0]
             for m in (SETTINGS, changed, dropped)]

    assert [(c.action, c.taken_from) for c in plans] == [
        ("unchanged", (CSA_MANAGER,)), ("configured", (CSA_MANAGER,)),
        ("configured", (CSA_MANAGER,))]  # the key the real run would prune
    assert server.stats.mutations == 0
    assert managers(server) == {(CSA_MANAGER, "Update")}
    (real,) = apply_manifests(kube, component(dropped))
    assert real.action == "configured"
    assert must_read(server, "v1", "ConfigMap", "settings", "default")["data"] == {"level": "info"}


def test_a_write_between_reading_and_migrating_is_a_409_and_the_takeover_plans_again(
    kube: KubeAPI, server: KubeAPIServer, clm_apply: Any, core: client.CoreV1Api,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    clm_apply(SETTINGS)
    read = kube.get
    calls: list[str] = []

    def read_then_someone_writes(*args: Any, **kwargs: Any) -> Any:
        found = read(*args, **kwargs)
        if not calls:  # a write lands between the read and the migration
            core.patch_namespaced_config_map("settings", "default",
                                             {"metadata": {"labels": {"team": "a"}}},
                                             field_manager="someone-else")
        calls.append("get")
        return found

    monkeypatch.setattr(kube, "get", read_then_someone_writes)
    server.stats.reset()

    stored = kube.apply(SETTINGS)

    assert calls == ["get", "get"]  # read, 409, read again
    assert server.stats.count("patch", "configmaps") == 4  # label, 409, migration, apply
    assert managers(server) == {("clmgit", "Apply"), ("someone-else", "Update")}
    assert stored["metadata"]["labels"] == {"app": "x", "team": "a"}
    assert "annotations" not in stored["metadata"]


def test_defaults_the_client_side_manager_owned_come_back_so_a_dry_run_sees_no_change(
    kube: KubeAPI, server: KubeAPIServer, clm_apply: Any
) -> None:
    clm_apply(WEB)
    live = must_read(server, "apps/v1", "Deployment", "web", "default")
    (csa,) = live["metadata"]["managedFields"]
    assert "f:revisionHistoryLimit" in csa["fieldsV1"]["f:spec"]  # defaulted, and owned

    (planned,) = apply_manifests(kube, component(WEB), dry_run=True)
    (done,) = apply_manifests(kube, component(WEB))

    assert (planned.action, done.action) == ("unchanged", "unchanged")
    after = must_read(server, "apps/v1", "Deployment", "web", "default")
    assert after["spec"] == live["spec"] and after["spec"]["revisionHistoryLimit"] == 10
