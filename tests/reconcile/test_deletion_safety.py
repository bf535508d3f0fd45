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
