"""The plan of a takeover from kubectl's client-side apply: whose fields move, what stays."""

from __future__ import annotations

from typing import Any

from clmgit.engine.fieldsv1 import paths, to_fields_v1
from clmgit.engine.takeover import CSA_MANAGER, LAST_APPLIED, plan

ANNOTATION: dict[str, Any] = {"f:metadata": {"f:annotations": {".": {}, f"f:{LAST_APPLIED}": {}}}}


def entry(manager: str, operation: str, fields: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"manager": manager, "operation": operation, "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": fields, **extra}


def live(*entries: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "x", "resourceVersion": "42", "managedFields": list(entries),
                         "annotations": {LAST_APPLIED: "{}"} if annotations is None
                         else annotations}}


def managed(takeover: Any) -> list[dict[str, Any]]:
    return next(op["value"] for op in takeover.patch if op["path"] == "/metadata/managedFields")


def test_the_client_side_fields_become_clmgits_apply_without_the_annotation() -> None:
    csa = entry(CSA_MANAGER, "Update", {"f:data": {".": {}, "f:a": {}}, **ANNOTATION})
    other = entry("hpa-controller", "Update", {"f:data": {"f:b": {}}})

    takeover = plan(live(csa, other), "clmgit")

    assert takeover is not None and takeover.managers == (CSA_MANAGER,)
    first, second = managed(takeover)
    assert (first["manager"], first["operation"]) == ("clmgit", "Apply")
    assert first["fieldsV1"] == {"f:data": {".": {}, "f:a": {}}}
    assert second == other  # never touched
    assert takeover.patch[1:] == [
        {"op": "replace", "path": "/metadata/resourceVersion", "value": "42"},
        {"op": "remove", "path": "/metadata/annotations/kubectl.kubernetes.io~1last-applied-"
                                 "configuration"}]


def test_an_existing_apply_entry_takes_the_union_and_other_annotations_stay_owned() -> None:
    mine = entry("clmgit", "Apply", {"f:data": {"f:b": {}}})
    csa = entry(CSA_MANAGER, "Update", {"f:data": {"f:a": {}}, "f:metadata": {"f:annotations": {
        ".": {}, f"f:{LAST_APPLIED}": {}, "f:team": {}}}})

    takeover = plan(live(mine, csa, annotations={LAST_APPLIED: "{}", "team": "a"}), "clmgit")

    assert takeover is not None
    (merged,) = managed(takeover)
    assert paths(merged["fieldsV1"]) == {
        ("f:data", "f:a"), ("f:data", "f:b"), ("f:metadata", "f:annotations"),
        ("f:metadata", "f:annotations", "f:team")}


def test_only_kubectls_client_side_managers_are_taken() -> None:
    edit = entry("kubectl-edit", "Update", ANNOTATION)
    kubectl_scale = entry("kubectl", "Update", {"f:spec": {"f:replicas": {}}})
    status = entry(CSA_MANAGER, "Update", {"f:status": {}}, subresource="status")

    assert plan(live(edit, kubectl_scale, status), "clmgit") is None
    old_kubectl = entry("kubectl", "Update", {"f:data": {}, **ANNOTATION})
    takeover = plan(live(old_kubectl), "clmgit")
    assert takeover is not None and takeover.managers == ("kubectl",)


def test_fields_v1_round_trips_a_path_that_has_children() -> None:
    both = {("f:data",), ("f:data", "f:a")}
    assert to_fields_v1(both) == {"f:data": {".": {}, "f:a": {}}}
    assert paths(to_fields_v1(both)) == both
