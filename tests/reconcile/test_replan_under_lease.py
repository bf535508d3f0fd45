"""A run acts on the plan it makes under a cluster's lease, not on the one made at its start: the
record is edited (and a pin moved) exactly between the two, when the run takes the lease."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from clmgit.model import desired_version
from clmgit.registry.file import FileRegistry, clusters_yaml
from clmgit.registry.http import HttpRegistry

pytestmark = pytest.mark.slow  # end to end: real processes, moto and the emulator


@pytest.fixture
def before_lease(monkeypatch):
    """`before_lease(edit)`: `edit()` runs once, as the run asks for its first lease — after
    its plan, before it holds the cluster."""

    def install(edit: Callable[[], None]) -> None:
        done: list[str] = []
        for registry in (FileRegistry, HttpRegistry):
            original = registry.acquire

            def acquire(self, cluster_id, holder, ttl, _original=original):
                if not done:
                    done.append(cluster_id)
                    edit()
                return _original(self, cluster_id, holder, ttl)

            monkeypatch.setattr(registry, "acquire", acquire)

    return install


def edit_record(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Change the one record of a clusters.yaml, as a person editing the file would."""
    records = yaml.safe_load(path.read_text())["clusters"]
    change(records[0])
    path.write_text(clusters_yaml(records))


def set_lifecycle(status: str) -> Callable[[dict[str, Any]], None]:
    return lambda record: record.update(lifecycle_status=status)


def created(sandbox):
    assert sandbox.reconcile().code == 0
    [cluster] = sandbox.clusters().values()
    return cluster


def test_a_decommission_cancelled_meanwhile_deletes_nothing(sandbox, before_lease):
    cluster = created(sandbox)
    stacks = sandbox.stacks(cluster)
    registry = sandbox.path / "clusters.yaml"
    edit_record(registry, set_lifecycle("decommission-requested"))
    before_lease(lambda: edit_record(registry, set_lifecycle("ready")))

    result = sandbox.reconcile()

    assert (result.code, result.out.strip()) == (0, "1 in-sync"), result.out + result.err
    now = sandbox.clusters()[cluster.alias]
    assert now.lifecycle_status == "ready"
    assert now.status == cluster.status
    assert sandbox.stacks(cluster) == stacks


def test_a_decommission_requested_meanwhile_is_a_decommission_not_an_update(sandbox,
                                                                            before_lease):
    cluster = created(sandbox)
    sandbox.commit_version(2)  # the run's plan: an update
    registry = sandbox.path / "clusters.yaml"
    before_lease(lambda: edit_record(registry, set_lifecycle("decommission-requested")))

    result = sandbox.reconcile()

    assert result.code == 0, result.out + result.err
    assert "decommission" in result.out
    now = sandbox.clusters()[cluster.alias]
    assert now.lifecycle_status == "decommissioned"
    assert now.status.current_version == cluster.status.current_version  # not the update's
    assert sandbox.stacks(cluster) == []


def test_an_update_block_set_meanwhile_skips_the_cluster(sandbox, before_lease):
    cluster = created(sandbox)
    sandbox.commit_version(2)
    registry = sandbox.path / "clusters.yaml"

    def block(record: dict[str, Any]) -> None:
        record["config_items"]["cluster_update_block"] = "incident 42"

    before_lease(lambda: edit_record(registry, block))

    result = sandbox.reconcile()

    assert result.code == 6, result.out + result.err  # blocked: not everything was done
    assert "skipped" in result.out and "cluster_update_block is set: incident 42" in result.out
    assert (f"error: 1 cluster(s) blocked, not reconciled: {cluster.alias} "
            "(cluster_update_block is set: incident 42)") in result.err
    now = sandbox.clusters()[cluster.alias]
    assert now.status == cluster.status  # no next_version written, nothing applied
    server = sandbox.fleet.server(cluster.alias)
    assert server.read("v1", "ConfigMap", "legacy-settings", "platform") is not None


def test_an_update_block_set_meanwhile_on_the_registry_server(sandbox_factory, before_lease):
    sandbox = sandbox_factory(1, "sqlite")
    cluster = created(sandbox)
    sandbox.commit_version(2)
    client = HttpRegistry(sandbox.registry_spec)
    before_lease(lambda: client.set_config_item(cluster.id, "cluster_update_block", "freeze"))

    result = sandbox.reconcile("--output", "json")

    assert result.code == 6, result.out + result.err
    document = yaml.safe_load(result.out)
    [entry] = document["items"]
    assert (entry["action"], entry["outcome"]) == ("blocked", "skipped")
    assert entry["detail"] == "cluster_update_block is set: freeze"
    assert document["errors"] == [{"cluster": cluster.id, "exit_code": 6,
                                   "message": "cluster_update_block is set: freeze"}]
    assert sandbox.clusters()[cluster.alias].status == cluster.status


BETA = """channel: beta
branch: beta
source: alpha
groups:
  - name: default
{pin}"""


def test_a_cluster_moved_to_another_channel_meanwhile_gets_that_channels_pin(sandbox,
                                                                            before_lease):
    cluster = created(sandbox)
    v1 = sandbox.versions[0]
    sandbox.commit_version(2)  # the run's plan: dev's head
    # At the run's start beta pins nothing: a run reading the pins of its start would block.
    sandbox.builder.commit("main", {"channels/beta.yaml": BETA.format(pin="")}, "beta")
    registry = sandbox.path / "clusters.yaml"

    def move() -> None:
        edit_record(registry, lambda record: record.update(channel="beta"))
        sandbox.builder.commit("main", {"channels/beta.yaml": BETA.format(pin=f"    sha: {v1}\n")},
                               "promote(beta): pin v1")

    before_lease(move)

    result = sandbox.reconcile()

    assert result.code == 0, result.out + result.err
    now = sandbox.clusters()[cluster.alias]
    assert now.channel == "beta"
    assert now.status.current_version == desired_version(v1, now)
    assert now.status.last_version == cluster.status.current_version


def test_decommission_by_request_withdrawn_meanwhile_is_skipped(sandbox, before_lease):
    registry = sandbox.path / "clusters.yaml"
    edit_record(registry, set_lifecycle("decommission-requested"))
    before_lease(lambda: edit_record(registry, set_lifecycle("ready")))
    alias = sandbox.records[0]["alias"]

    result = sandbox.cli("decommission", "--cluster", alias, "--kubeconfig",
                         str(sandbox.kubeconfig))

    assert result.code == 0, result.out + result.err
    assert "skipped" in result.out
    assert "lifecycle_status is now 'ready', no longer 'decommission-requested'" in result.out
    assert sandbox.clusters()[alias].lifecycle_status == "ready"


def test_a_cluster_decommissioned_meanwhile_is_not_built_again(sandbox, before_lease):
    cluster = created(sandbox)
    sandbox.commit_version(2)
    registry = sandbox.path / "clusters.yaml"
    before_lease(lambda: edit_record(registry, set_lifecycle("decommissioned")))

    result = sandbox.reconcile()

    assert result.code == 0, result.out + result.err
    assert "skipped" in result.out and "it is decommissioned" in result.out
    now = sandbox.clusters()[cluster.alias]
    assert (now.lifecycle_status, now.status) == ("decommissioned", cluster.status)
