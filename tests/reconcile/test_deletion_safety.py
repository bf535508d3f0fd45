"""Deletions through `clmgit reconcile` stay inside the cluster they are applied to."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # end to end: real processes, moto and the emulator


def test_a_labels_stack_deletion_leaves_another_clusters_stacks_in_the_account(
        sandbox_factory):
    sandbox = sandbox_factory(2)
    assert sandbox.reconcile().code == 0
    one, two = (sandbox.clusters()[r["alias"]] for r in sandbox.records)
    sandbox.builder.commit("dev", {"cluster/cf-deletions.yaml":
                                   "post_apply:\n- labels: {clmgit/role: cf-manifest}\n"},
                           "Delete the cf-manifests stacks")

    result = sandbox.reconcile("--cluster", one.alias)

    assert result.code == 0, result.out + result.err
    assert f"logs-{one.local_id}" not in sandbox.stacks(one)
    assert sandbox.stacks(two) == sorted(
        [two.local_id, f"logs-{two.local_id}", f"nodepool-default-worker-{two.local_id}"])


DANGEROUS = "post_apply:\n  - {kind: ConfigMap, namespace: platform%s}\n"
REFUSAL = ("cluster/manifests/deletions.yaml: post_apply[0]: deleting every ConfigMap in "
           "namespace platform (selector '!keep' requires nothing of an object) is refused as "
           "dangerous; add allow_dangerous: true to the entry if that is meant")


@pytest.mark.parametrize(("entry", "what"), [
    ("name: kube-system", "Namespace kube-system"),
    ("selector: kubernetes.io/metadata.name",  # every Namespace has it
     "Namespace kube-system (selector 'kubernetes.io/metadata.name' does not exclude it)"),
])
def test_render_refuses_a_deletion_of_kube_system(fleet, tmp_path, entry, what):
    fleet.builder.commit("dev", {"cluster/manifests/deletions.yaml":
                                 f"pre_apply:\n  - {{kind: Namespace, {entry}}}\n"},
                         "Delete kube-system")

    result = fleet.cli("render", "--cluster", "dev-1", "--out", str(tmp_path / "out"))

    assert result.code == 1
    assert result.err == (
        f"error: cluster/manifests/deletions.yaml: pre_apply[0]: deleting {what} "
        "is refused as dangerous; add allow_dangerous: true to the entry if that is meant\n")
    assert not (tmp_path / "out").exists()


def reconcile_deleting(sandbox, entry_tail: str):
    """Create the cluster, commit a deletions file of one ConfigMap entry of namespace
    platform (`entry_tail` added), reconcile again: (the result, the cluster's API server)."""
    assert sandbox.reconcile().code == 0
    sandbox.builder.commit("dev", {"cluster/manifests/deletions.yaml": DANGEROUS % entry_tail},
                           "Delete ConfigMaps of platform")
    return sandbox.reconcile(), sandbox.fleet.server(sandbox.records[0]["alias"])


def test_reconcile_fails_the_cluster_on_a_dangerous_deletion_and_deletes_nothing(sandbox):
    # A selector every object without the label `keep` matches: before, it deleted them all.
    result, server = reconcile_deleting(sandbox, ", selector: '!keep'")

    assert result.code == 4, result.out + result.err
    assert REFUSAL in result.out
    alias = sandbox.records[0]["alias"]
    assert sandbox.clusters()[alias].status.problems[-1].title == REFUSAL
    assert server.read("v1", "ConfigMap", "legacy-settings", "platform") is not None
    assert server.read("v1", "ConfigMap", "platform-settings", "platform") is not None


def test_an_entry_that_allows_danger_runs_against_the_cluster(sandbox):
    result, server = reconcile_deleting(sandbox, ", allow_dangerous: true")

    assert result.code == 0, result.out + result.err
    assert "post_apply: deleted ConfigMap platform/legacy-settings" in result.out
    assert "post_apply: deleted ConfigMap platform/platform-settings" in result.out
    assert server.read("v1", "ConfigMap", "platform-settings", "platform") is None
