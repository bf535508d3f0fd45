"""A run that leaves blocked clusters undone is not a success: exit 6, the blocked clusters
named on stderr with their reasons, and in the JSON envelope's `errors`."""

from __future__ import annotations

import json

from tests.helpers.fleet import default_records


def blocked_fleet(fleet) -> None:
    records = default_records()
    records[0]["config_items"] = {"cluster_update_block": "incident 42"}
    fleet.set_clusters(records)


def test_blocked_clusters_exit_6_and_are_named(fleet):
    blocked_fleet(fleet)

    result = fleet.cli("reconcile", "--cluster", "dev-1")

    assert result.code == 6, (result.out, result.err)
    assert result.err.splitlines()[-1] == ("error: 1 cluster(s) blocked, not reconciled: dev-1 "
                                           "(cluster_update_block is set: incident 42)")


def test_the_envelope_carries_them_in_errors(fleet):
    blocked_fleet(fleet)

    result = fleet.cli("reconcile", "--cluster", "dev-1", "--dry-run", "-o", "json")

    assert result.code == 6, (result.out, result.err)
    document = json.loads(result.out)
    assert document["errors"] == [{"cluster": "aws:123456789012:eu-central-1:dev-1",
                                   "message": "cluster_update_block is set: incident 42",
                                   "exit_code": 6}]
    assert document["summary"] == {"skipped": 1}
