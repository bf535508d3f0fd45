"""The registry server's HTTP API: validation (400/401/404/405/413, never 500), ETags and
If-Match, lease conflicts, node pools, config items, infrastructure accounts, and the OpenAPI
document it serves against the routes it has."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clmgit.registry.http import HttpRegistry
from clmgit.registry.server.httpd import RegistryServer
from tests.helpers.concurrency import all_at_once
from tests.helpers.hypothesis_profiles import examples
from tests.helpers.registry import TOKEN, records

C0 = "aws:123456789012:eu-central-1:c0"
CLUSTER = "/kubernetes-clusters/aws%3A123456789012%3Aeu-central-1%3Ac0"


@pytest.fixture
def loaded(server: RegistryServer, http: requests.Session) -> str:
    for r in records(2):
        assert http.post(server.url + "/kubernetes-clusters", json=r).status_code == 201
    return server.url


def problem(response: requests.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status and body["title"] and body["detail"]
    return dict(body)


POOL: dict[str, Any] = {
    "name": "spot",
    "profile": "worker-spot",
    "instance_types": ["m5.large"],
    "discount_strategy": "spot",
    "min_size": 0,
    "max_size": 4,
}
ACCOUNT: dict[str, Any] = {
    "id": "aws:123456789012",
    "type": "aws",
    "name": "team",
    "owner": "team/bar",
    "cost_center": "0000001234",
    "environment": "production",
    "criticality_level": 1,
    "external_id": "123456789012",
    "lifecycle_status": "ready",
}


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b"{not json", "not valid JSON"),
        (b"[]", "the body: Input should be a valid dictionary"),
        (b'{"colour": "red"}', "unknown field: colour"),
        (b'{"criticality_level": "high"}', "criticality_level: Input should be a valid integer"),
        (b'{"criticality_level": 2147483648}', "less than or equal to 2147483647"),
        (b'{"criticality_level": 99999999999999999999999}', "outside the 64-bit integer range"),
        (b'{"criticality_level": 1e400}', "criticality_level is not a finite number"),
        (b'{"criticality_level": NaN}', "NaN is not a JSON number"),
        (b'{"lifecycle_status": "gone"}', "lifecycle_status: Input should be"),
        (b'{"config_items": {"a": 1}}', "config_items.a: Input should be a valid string"),
        (b'{"status": {"current_version": 7}}', "status.current_version: Input should be"),
        (b'{"status": {"problems": [{"title": "x"}]}}', "status.problems.0.type: Field required"),
        (json.dumps({"node_pools": [{**POOL, "min_size": 3, "max_size": 1}]}).encode(),
         "max_size must not be below min_size"),
        (json.dumps({"node_pools": [POOL, POOL]}).encode(), "lists a node pool twice"),
        (b'{"lease": {"holder": "a", "ttl_seconds": -1}}', "greater than or equal to 0"),
        (b'{"lease": {"holder": "a", "ttl_seconds": 86401}}', "less than or equal to 86400"),
        (b'{"lease": {"holder": "", "ttl_seconds": 5}}', "lease.holder"),
        (b'{"alias": null}', "alias: Input should be a valid string"),
        (b'{"id": "other"}', "the body names cluster 'other'"),
        (b"", "needs a JSON body"),
    ],
)
def test_bad_patch_bodies_are_400_with_a_reason(
    loaded: str, http: requests.Session, body: bytes, detail: str
) -> None:
    response = http.patch(loaded + CLUSTER, data=body)
    found = problem(response, 400)
    assert detail in found["detail"]
    # Upstream's Error fields, for CLM's generated client.
    assert found["code"] == 400 and found["message"] == found["detail"]


def test_bad_bodies_change_nothing(loaded: str, http: requests.Session) -> None:
    before = http.get(loaded + CLUSTER)
    http.patch(loaded + CLUSTER, json={"channel": "dev", "colour": "red"})
    assert http.get(loaded + CLUSTER).json() == before.json()


def test_tokens_are_required_and_checked(server: RegistryServer, loaded: str) -> None:
    assert problem(requests.get(loaded + "/kubernetes-clusters"), 401)
    wrong = {"Authorization": "Bearer not-the-token"}
    response = requests.get(loaded + "/kubernetes-clusters", headers=wrong)
    assert problem(response, 401)["detail"] == "a valid bearer token is required"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    for token in (TOKEN, "second"):  # every listed token is accepted
        ok = requests.get(
            loaded + "/kubernetes-clusters", headers={"Authorization": f"Bearer {token}"}
        )
        assert ok.status_code == 200


@pytest.mark.parametrize(("header", "status"), [
    (f"bearer {TOKEN}", 200), (f"BEARER {TOKEN}", 200), (f"Bearer   {TOKEN}", 200),
    (f"Bearer {TOKEN}x", 401), (f"Basic {TOKEN}", 401), (f"Bearer{TOKEN}", 401),
    (f"Bearer {TOKEN.upper()}", 401 if TOKEN.upper() != TOKEN else 200), ("Bearer", 401),
    (f"Bearer {TOKEN} x", 401)])
def test_the_auth_scheme_is_case_insensitive_the_token_is_not(
        loaded: str, header: str, status: int) -> None:
    """RFC 9110 §11.1: the scheme is a case-insensitive token, one or more spaces before the
    credentials; the token itself compares exactly."""
    response = requests.get(loaded + "/kubernetes-clusters", headers={"Authorization": header})
    assert response.status_code == status


def test_unknown_things_are_404_and_wrong_methods_405(loaded: str, http: requests.Session) -> None:
    assert (
        "no cluster nope" in problem(http.get(loaded + "/kubernetes-clusters/nope"), 404)["detail"]
    )
    assert problem(http.patch(loaded + "/kubernetes-clusters/nope", json={}), 404)
    assert problem(http.get(loaded + "/no-such-thing"), 404)
    assert problem(http.get(loaded + CLUSTER + "/node-pools/nope"), 404)
    assert problem(http.delete(loaded + CLUSTER + "/config-items/nope"), 404)
    wrong = http.put(loaded + "/kubernetes-clusters", json={})
    assert "use GET, HEAD, POST" in problem(wrong, 405)["detail"]
    assert wrong.headers["Allow"] == "GET, HEAD, POST"
    for method in ("OPTIONS", "TRACE"):
        refused = http.request(method, loaded + CLUSTER)
        assert problem(refused, 405) and refused.headers["Allow"] == "GET, HEAD, PATCH, DELETE"
    head = http.head(loaded + CLUSTER)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["ETag"] == http.get(loaded + CLUSTER).headers["ETag"]
    # Ids that could never be read back are refused, not stored.
    for cid in ("..", "a/b", "UPPER", "x"):
        bad = http.post(loaded + "/kubernetes-clusters", json={**records(1)[0], "id": cid})
        assert "id" in problem(bad, 400)["detail"]


def test_oversized_bodies_are_413(loaded: str, http: requests.Session) -> None:
    response = http.patch(loaded + CLUSTER, data=b"x" * (2 * 1024 * 1024))
    assert problem(response, 413)


def test_creating_a_cluster_twice_is_409(loaded: str, http: requests.Session) -> None:
    again = http.post(loaded + "/kubernetes-clusters", json=records(1)[0])
    assert "exists already" in problem(again, 409)["detail"]
    assert problem(http.post(loaded + "/kubernetes-clusters", json={"id": "a-b"}), 400)


def test_list_filters_select_by_field(loaded: str, http: requests.Session) -> None:
    http.patch(loaded + CLUSTER, json={"channel": "stable", "criticality_level": 1})
    by_channel = http.get(loaded + "/kubernetes-clusters", params={"channel": "stable"}).json()
    assert [c["id"] for c in by_channel["items"]] == [C0]
    by_level = http.get(loaded + "/kubernetes-clusters", params={"criticality_level": "2"}).json()
    assert [c["id"] for c in by_level["items"]] == ["aws:123456789012:eu-central-1:c1"]
    assert problem(
        http.get(loaded + "/kubernetes-clusters", params={"criticality_level": "x"}), 400
    )
    assert "colour" in problem(http.get(loaded + "/kubernetes-clusters?colour=red"), 400)["detail"]


def test_if_match_refuses_a_write_based_on_a_stale_read(
    loaded: str, http: requests.Session
) -> None:
    etag = http.get(loaded + CLUSTER).headers["ETag"]
    first = http.patch(loaded + CLUSTER, json={"alias": "one"}, headers={"If-Match": etag})
    assert first.status_code == 200 and first.headers["ETag"] != etag
    stale = http.patch(loaded + CLUSTER, json={"alias": "two"}, headers={"If-Match": etag})
    assert "changed since it was read" in problem(stale, 412)["detail"]
    assert http.get(loaded + CLUSTER).json()["alias"] == "one"


def test_if_match_takes_a_list_of_entity_tags(loaded: str, http: requests.Session) -> None:
    """RFC 9110 §13.1.1: a list matches if one of its tags does, by the strong comparison."""
    etag = http.get(loaded + CLUSTER).headers["ETag"]
    for refused in ('"999"', f"W/{etag}", '"999", W/' + etag, etag.strip('"')):
        response = http.patch(loaded + CLUSTER, json={"alias": "xx"},
                              headers={"If-Match": refused})
        assert problem(response, 412), refused
    listed = http.patch(loaded + CLUSTER, json={"alias": "one"},
                        headers={"If-Match": f'"999", {etag}'})
    assert listed.status_code == 200
    assert http.patch(loaded + CLUSTER, json={"alias": "two"},
                      headers={"If-Match": "*"}).status_code == 200


def test_a_held_lease_is_named_and_can_be_taken_over_explicitly(
    loaded: str, http: requests.Session
) -> None:
    taken = http.patch(loaded + CLUSTER, json={"lease": {"holder": "a", "ttl_seconds": 60}})
    assert taken.json()["lease"]["holder"] == "a"
    refused = problem(
        http.patch(loaded + CLUSTER, json={"lease": {"holder": "b", "ttl_seconds": 60}}), 409
    )
    assert refused["type"] == "urn:clmgit:problem:lease-held" and refused["holder"] == "a"
    wrong: dict[str, Any] = {"holder": "b", "ttl_seconds": 60, "take_over": "someone-else"}
    assert problem(http.patch(loaded + CLUSTER, json={"lease": wrong}), 409)
    over = http.patch(loaded + CLUSTER, json={"lease": {**wrong, "take_over": "a"}})
    assert over.json()["lease"]["holder"] == "b"
    lost = http.patch(loaded + CLUSTER, json={}, headers={"Clmgit-Lease-Holder": "a"})
    assert problem(lost, 409)["type"] == "urn:clmgit:problem:lease-lost"


def test_node_pools_and_config_items(loaded: str, http: requests.Session) -> None:
    pool_url = loaded + CLUSTER + "/node-pools/spot"
    created = http.put(pool_url, json=POOL)
    assert created.status_code == 201
    assert created.json() == {**POOL, "config_items": {}}
    assert http.put(pool_url, json={**POOL, "max_size": 5}).status_code == 200
    # CLM's pools always have instance types: a pool without them is refused, not defaulted.
    empty = http.put(pool_url, json={**POOL, "instance_types": []})
    assert "instance_types" in problem(empty, 400)["detail"]
    patched = http.patch(pool_url, json={"min_size": 2})
    assert patched.status_code == 200 and patched.json()["min_size"] == 2
    assert patched.json()["max_size"] == 5
    assert "below min_size" in problem(http.patch(pool_url, json={"max_size": 1}), 400)["detail"]
    assert problem(http.patch(loaded + CLUSTER + "/node-pools/nope", json={}), 404)
    assert http.put(pool_url + "/config-items/taints", json={"value": "x"}).json() == {"value": "x"}
    assert (
        http.put(loaded + CLUSTER + "/config-items/flag", json={"value": "on"}).status_code == 200
    )
    assert problem(http.put(pool_url, json={**POOL, "name": "other"}), 400)
    assert problem(http.put(loaded + CLUSTER + "/config-items/kk", json={"value": 1}), 400)
    assert problem(http.put(loaded + CLUSTER + "/config-items/Bad.Key", json={"value": "1"}), 400)
    names = [p["name"] for p in http.get(loaded + CLUSTER + "/node-pools").json()["items"]]
    assert names == ["default-worker", "spot"]
    cluster = http.get(loaded + CLUSTER).json()
    assert cluster["config_items"] == {"flag": "on"}
    assert cluster["node_pools"][1]["config_items"] == {"taints": "x"}
    assert cluster["node_pools"][1]["max_size"] == 5
    assert http.delete(pool_url + "/config-items/taints").status_code == 204
    assert http.delete(pool_url).status_code == 204
    assert http.delete(loaded + CLUSTER + "/config-items/flag").status_code == 204
    after = http.get(loaded + CLUSTER).json()
    assert [p["name"] for p in after["node_pools"]] == ["default-worker"]
    assert after["config_items"] == {}


def test_concurrent_config_item_writes_to_one_cluster_lose_nothing(
    loaded: str, client: HttpRegistry
) -> None:
    all_at_once(50, lambda i: client.set_config_item(C0, f"k{i}", str(i)))
    items = next(c for c in client.clusters() if c.id == C0).config_items
    assert items == {f"k{i}": str(i) for i in range(50)}


def test_infrastructure_accounts(server: RegistryServer, http: requests.Session) -> None:
    url = server.url + "/infrastructure-accounts"
    assert http.post(url, json=ACCOUNT).status_code == 201
    other = {**ACCOUNT, "id": "aws:210987654321", "lifecycle_status": "decommissioned",
             "cost_center": "99"}
    assert http.post(url, json=other).status_code == 201
    assert problem(http.post(url, json=ACCOUNT), 409)
    no_cost_center = {k: v for k, v in ACCOUNT.items() if k != "cost_center"}
    assert "cost_center" in problem(http.post(url, json=no_cost_center), 400)["detail"]
    patched = http.patch(f"{url}/aws:123456789012", json={"owner": "teapot"})
    assert patched.json()["owner"] == "teapot"
    assert http.get(url).json()["items"] == [{**ACCOUNT, "owner": "teapot"}, other]
    # Every filter of CLM's API selects (CLM asks for the ready accounts).
    ready = http.get(url, params={"lifecycle_status": "ready"}).json()["items"]
    assert [a["id"] for a in ready] == [ACCOUNT["id"]]
    by_cost_center = http.get(url, params={"cost_center": "99"}).json()["items"]
    assert [a["id"] for a in by_cost_center] == [other["id"]]
    assert http.get(url, params={"criticality_level": 2}).json()["items"] == []
    assert problem(http.get(url, params={"lifecycle_status": "gone"}), 400)
    assert problem(http.get(f"{url}/aws:0"), 404)
    assert problem(http.patch(f"{url}/aws:123456789012", json={"id": "x"}), 400)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "status",
                    "lease",
                    "node_pools",
                    "config_items",
                    "channel",
                    "criticality_level",
                    "holder",
                    "ttl_seconds",
                    "name",
                    "problems",
                    "x",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(
    max_examples=examples(150), deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(body=JSON, path=st.sampled_from(["", "/node-pools/p", "/config-items/k"]))
def test_no_body_makes_the_server_fail(
    loaded: str, http: requests.Session, body: Any, path: str
) -> None:
    method = "PATCH" if not path else "PUT"
    response = http.request(method, loaded + CLUSTER + path, data=json.dumps(body))
    assert response.status_code < 500, response.text
