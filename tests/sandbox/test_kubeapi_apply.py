"""Server-side apply: creation, no-op re-apply, removal of dropped fields, conflicts and force."""

from __future__ import annotations

import copy
import datetime as dt
import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_crd, make_deployment
from kubernetes import client, config
from kubernetes.dynamic import DynamicClient

APPLY = "application/apply-patch+yaml"
MANIFEST = make_deployment(
    "web",
    replicas=2,
    containers=[
        {"name": "app", "image": "app:1", "ports": [{"containerPort": 80}]},
        {"name": "sidecar", "image": "side:1"},
    ],
)
MANIFEST["metadata"]["labels"]["team"] = "a"


@pytest.fixture
def deployments(dynamic: DynamicClient):
    return dynamic.resources.get(api_version="apps/v1", kind="Deployment")


def ticking_clock() -> Callable[[], str]:
    """A clock that moves one second each time the server reads it."""
    seconds = itertools.count()
    start = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    return lambda: (start + dt.timedelta(seconds=next(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")


def manifest() -> dict:
    return copy.deepcopy(MANIFEST)


def apply(resource, body: dict, manager: str = "clmgit", **kwargs):
    return resource.server_side_apply(body=body, field_manager=manager, **kwargs)


def test_apply_creates_and_records_the_manager(deployments) -> None:
    created = apply(deployments, manifest()).to_dict()
    entries = created["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"], e["apiVersion"]) for e in entries] == [
        ("clmgit", "Apply", "apps/v1")
    ]
    fields = entries[0]["fieldsV1"]
    assert fields["f:metadata"]["f:labels"] == {"f:app": {}, "f:team": {}}
    assert 'k:{"name":"app"}' in fields["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert created["metadata"]["generation"] == 1


def test_reapplying_the_same_manifest_is_a_no_op(tmp_path: Path) -> None:
    with KubeAPIServer(clock=ticking_clock()) as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        dynamic = DynamicClient(config.new_client_from_config(str(kubeconfig)))
        deployments = dynamic.resources.get(api_version="apps/v1", kind="Deployment")
        first = apply(deployments, manifest())
        server.stats.reset()
        second = apply(deployments, manifest())
        assert second.metadata.resourceVersion == first.metadata.resourceVersion
        # Not even the manager's timestamp moves, although the clock did.
        assert second.to_dict()["metadata"] == first.to_dict()["metadata"]
        assert server.stats.count("patch", "deployments.apps") == 1
        assert server.stats.mutations == 0


def test_fields_dropped_from_the_manifest_are_removed(deployments) -> None:
    apply(deployments, manifest())
    smaller = manifest()
    del smaller["metadata"]["labels"]["team"]
    smaller["spec"]["template"]["spec"]["containers"].pop()  # the sidecar
    del smaller["spec"]["replicas"]
    result = apply(deployments, smaller).to_dict()
    assert result["metadata"]["labels"] == {"app": "web"}
    assert [c["name"] for c in result["spec"]["template"]["spec"]["containers"]] == ["app"]
    assert "replicas" not in result["spec"]
    assert result["metadata"]["generation"] == 2


def test_a_field_another_manager_changed_conflicts_unless_forced(
    deployments, apps: client.AppsV1Api
) -> None:
    apply(deployments, manifest())
    apps.patch_namespaced_deployment(
        "web", "default", {"spec": {"replicas": 5}}, field_manager="autoscaler"
    )
    changed = manifest()
    changed["spec"]["replicas"] = 3
    with pytest.raises(client.ApiException) as e:
        apply(deployments, changed)
    body = json.loads(e.value.body)
    assert e.value.status == 409 and body["reason"] == "Conflict"
    assert body["message"].startswith(
        'Apply failed with 1 conflict: conflict with "autoscaler" using apps/v1'
    )
    assert body["message"].endswith(": .spec.replicas")
    assert body["details"]["causes"][0]["reason"] == "FieldManagerConflict"
    assert body["details"]["causes"][0]["field"] == ".spec.replicas"

    forced = apply(deployments, changed, force_conflicts=True).to_dict()
    assert forced["spec"]["replicas"] == 3
    owners = {e["manager"]: e["fieldsV1"] for e in forced["metadata"]["managedFields"]}
    assert "autoscaler" not in owners  # it owned only replicas, and lost them
    assert "f:replicas" in owners["clmgit"]["f:spec"]


def test_same_value_is_shared_and_survives_one_owner_dropping_it(deployments) -> None:
    apply(deployments, manifest())
    other = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"team": "a"}},
    }
    apply(deployments, other, manager="team-tool")  # same value: no conflict, shared
    smaller = manifest()
    del smaller["metadata"]["labels"]["team"]
    result = apply(deployments, smaller).to_dict()
    assert result["metadata"]["labels"] == {"app": "web", "team": "a"}


def test_apply_without_a_field_manager_is_a_422(deployments) -> None:
    with pytest.raises(client.ApiException) as e:
        deployments.server_side_apply(body=manifest())
    assert e.value.status == 422
    assert "fieldManager: Required value" in json.loads(e.value.body)["message"]


def test_apply_through_the_typed_api_and_dry_run(apps: client.AppsV1Api) -> None:
    preview = apps.patch_namespaced_deployment(
        "web", "default", manifest(), field_manager="clmgit", dry_run="All", _content_type=APPLY
    )
    assert preview.spec.replicas == 2
    assert apps.list_namespaced_deployment("default").items == []
    created = apps.patch_namespaced_deployment(
        "web", "default", manifest(), field_manager="clmgit", _content_type=APPLY
    )
    assert created.metadata.managed_fields[0].operation == "Apply"


def test_custom_resource_lists_follow_the_crd_schema(dynamic: DynamicClient) -> None:
    item_schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
    }
    spec_schema = {
        "type": "object",
        "properties": {
            "pools": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": item_schema,
            },
            "zones": {"type": "array", "items": {"type": "string"}},
        },
    }
    crds = dynamic.resources.get(
        api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"
    )
    crds.create(body=make_crd("example.org", "Fleet", scope="Cluster", spec_schema=spec_schema))
    fleets = dynamic.resources.get(api_version="example.org/v1", kind="Fleet")
    base = {"apiVersion": "example.org/v1", "kind": "Fleet", "metadata": {"name": "f"}}
    apply(
        fleets,
        {
            **base,
            "spec": {"pools": [{"name": "a", "size": 1}, {"name": "b", "size": 1}], "zones": ["x"]},
        },
    )
    # A map-list merges by key: another manager's item joins the list.
    apply(fleets, {**base, "spec": {"pools": [{"name": "c", "size": 3}]}}, manager="scaler")
    pools = fleets.get(name="f").to_dict()["spec"]["pools"]
    assert [p["name"] for p in pools] == ["a", "b", "c"]
    # Dropping an item removes only what this manager owned.
    apply(fleets, {**base, "spec": {"pools": [{"name": "a", "size": 1}], "zones": ["x"]}})
    pools = fleets.get(name="f").to_dict()["spec"]["pools"]
    assert [p["name"] for p in pools] == ["a", "c"]
    # A list without a list-type is atomic: owned whole, so changing it conflicts.
    with pytest.raises(client.ApiException) as e:
        apply(fleets, {**base, "spec": {"zones": ["x", "y"]}}, manager="scaler")
    assert e.value.status == 409
    assert json.loads(e.value.body)["details"]["causes"][0]["field"] == ".spec.zones"
