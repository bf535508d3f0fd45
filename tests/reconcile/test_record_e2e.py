"""Through the real CLI on moto and the emulator: a reconcile leaves the checkout clean, with
the registry's state in a commit of clmgit's own, and a run with nothing to do commits nothing."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # end to end: moto and the emulator


def test_reconcile_commits_the_state_it_records(sandbox) -> None:
    git = sandbox.builder.git
    before = sandbox.builder.sha("main")

    result = sandbox.reconcile()

    assert result.code == 0, result.out + result.err
    assert git("status", "--porcelain") == ""
    assert git("log", "-1", "--format=%s", "main") == "Record the state of 1 cluster"
    assert git("rev-parse", "main^") == before
    assert f"recorded the state in clusters.yaml: {sandbox.builder.sha('main')[:7]}" in result.err
    [cluster] = sandbox.clusters().values()
    assert cluster.status.current_version.startswith(sandbox.versions[0])
    committed = git("show", "main:clusters.yaml")
    assert cluster.status.current_version in committed

    again = sandbox.reconcile()
    assert (again.code, again.out.strip()) == (0, "1 in-sync"), again.err
    assert git("log", "-1", "--format=%s", "main") == "Record the state of 1 cluster"
    assert git("rev-list", "--count", f"{before}..main") == "1"
