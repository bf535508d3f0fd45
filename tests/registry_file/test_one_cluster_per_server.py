"""One cluster per API server: a record copied from another cluster (id and alias changed, URL
not) is refused with the registry as a whole, before anything reaches either cluster."""

from __future__ import annotations

import copy

import pytest

from clmgit.registry.records import api_server_key
from tests.helpers.fleet import Fleet, default_records


@pytest.mark.parametrize(("a", "b", "same"), [
    ("https://kube-1.example.org", "HTTPS://Kube-1.EXAMPLE.org:443/", True),
    ("http://kube-1.example.org/", "http://kube-1.example.org:80", True),
    ("https://kube-1.example.org/api", "https://kube-1.example.org/api/", True),
    ("https://[::1]:443/", "https://[::1]", True),
    ("https://kube-1.example.org", "https://kube-2.example.org", False),
    ("https://kube-1.example.org", "https://kube-1.example.org:8443", False),
    ("https://kube-1.example.org", "http://kube-1.example.org", False),
    ("https://kube-1.example.org/a", "https://kube-1.example.org/b", False),
])
def test_urls_of_one_server_have_one_key(a: str, b: str, same: bool) -> None:
    assert (api_server_key(a) == api_server_key(b)) is same


def test_no_url_is_no_key() -> None:
    assert api_server_key("") is None and api_server_key("  ") is None


def test_a_copied_record_stops_reconcile_with_one_sentence(fleet: Fleet) -> None:
    records = default_records()
    copied = copy.deepcopy(records[3])  # beta-1, its URL kept in another spelling
    copied.update(id="aws:123456789012:eu-central-1:beta-2", alias="beta-2", local_id="beta-2",
                  api_server_url=str(copied["api_server_url"]).upper() + ":443/")
    fleet.set_clusters([*records, copied])
    before = fleet.file("clusters.yaml")
    result = fleet.cli("reconcile", "--channel", "beta")
    assert result.code == 1, result.err
    assert result.err == (
        f"error: {fleet.path / 'clusters.yaml'}: clusters aws:123456789012:eu-central-1:beta-1 and "
        "aws:123456789012:eu-central-1:beta-2 have the same api_server_url "
        "(https://beta-1.example.org); each cluster needs its own\n")
    assert fleet.file("clusters.yaml") == before


def test_a_mistyped_record_key_is_refused_with_the_key_it_meant(fleet: Fleet) -> None:
    """`chanel:` would otherwise be ignored, and the cluster run in no channel at all."""
    records = default_records()
    records[0]["chanel"] = records[0].pop("channel")
    records[1]["node_pools"][0]["max_sise"] = 3
    fleet.set_clusters(records)
    before = fleet.file("clusters.yaml")
    r = fleet.cli("status")
    assert r.code == 1 and not r.out
    assert "cluster #1" in r.err and "unknown key 'chanel'; did you mean 'channel'?" in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert fleet.file("clusters.yaml") == before
    records[0]["channel"] = records[0].pop("chanel")
    records[0]["account_name"] = "prod"  # CLM's own field: known
    fleet.set_clusters(records)
    r = fleet.cli("status")
    assert r.code == 1 and "node pool #1: unknown key 'max_sise'; did you mean 'max_size'?" in r.err
