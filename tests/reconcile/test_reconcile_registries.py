"""The reconcile story on every registry: the repo's clusters.yaml, and the registry server on
SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import pytest

from clmgit.model import desired_version
from tests.helpers.registry import BACKENDS

pytestmark = pytest.mark.slow  # end to end: real processes, moto and the emulator


@pytest.mark.parametrize("backend", BACKENDS)
def test_create_then_nothing_then_an_update_then_a_failure_kept_apart(sandbox_factory, backend):
    def break_second(records):
        records[1]["node_pools"][0]["profile"] = "no-such-profile"

    sandbox = sandbox_factory(2, backend, edit=break_second)
    good, bad = (r["alias"] for r in sandbox.records)

    first = sandbox.reconcile()
    assert first.code == 4, first.err  # one cluster fails, the other goes on
    clusters = sandbox.clusters()
    assert clusters[good].lifecycle_status == "ready"
    assert clusters[good].status.current_version == desired_version(sandbox.versions[0],
                                                                     clusters[good])
    assert "no-such-profile" in clusters[bad].status.problems[0].title
    assert clusters[bad].status.next_version and not clusters[bad].status.current_version

    before = sandbox.clusters()
    again = sandbox.reconcile("--cluster", good)
    assert (again.code, again.out.strip()) == (0, "1 in-sync")
    assert sandbox.clusters() == before  # nothing written

    v2 = sandbox.commit_version(2)
    updated = sandbox.reconcile("--cluster", good)
    assert updated.code == 0, updated.err
    assert "post_apply: deleted ConfigMap platform/legacy-settings" in updated.out
    cluster = sandbox.clusters()[good]
    assert cluster.status.current_version == desired_version(v2, cluster)
    assert cluster.status.last_version == before[good].status.current_version
