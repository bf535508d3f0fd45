"""The health gate end to end (docs/how-to/health-gate.md) on moto and the emulator: a
crash-looping Deployment applied by reconcile blocks `promote`; once fixed and observed healthy
for `stable_for` (forced clocks) it passes; an API server that does not answer is `unknown` and
blocks."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from clmgit_sandbox.configtree import cluster_tree

from clmgit.access import Access
from clmgit.errors import RefusedError
from clmgit.healthstate import HEALTHY, UNHEALTHY, UNKNOWN
from clmgit.promotion.promote import check, plan_promotion
from clmgit.reconcile.backends import AwsBackends
from clmgit.reconcile.health import Observer, observe_fleet, workspace_gates
from clmgit.workspace import open_workspace

pytestmark = pytest.mark.slow  # end to end: moto, the emulator, the node simulator

ECHO = "cluster/manifests/platform/echo.yaml"
GATE = "  healthy_in_source: {stable_for: 10m, progress_deadline: 30m}\n"


def tagged(tag: str) -> dict[str, str]:
    text = cluster_tree(1)[ECHO]
    return {ECHO: re.sub(r'(image: "?[^\s"]+:)[^\s"]+', rf"\g<1>{tag}", text)}


def test_a_crash_loop_blocks_promote_until_fixed_and_stable(sandbox) -> None:
    b = sandbox.builder
    alpha = b.git("show", "main:channels/alpha.yaml") + "\n"
    b.commit("main", {"channels/alpha.yaml": alpha.replace(
        "  applied_in_source: true\n", "  applied_in_source: true\n" + GATE)}, "Health gate")
    b.commit("dev", tagged("broken"), "echo: a broken image")
    assert sandbox.reconcile().code == 0
    [cluster] = sandbox.clusters().values()
    recorded = cluster.status.health  # reconcile looked right after its apply
    assert recorded is not None and recorded.version == cluster.status.current_version
    assert recorded.state != HEALTHY

    looked = sandbox.cli("health", "--channel", "dev", "--kubeconfig", str(sandbox.kubeconfig),
                         "-o", "json")
    assert looked.code == 4, looked.err  # an unhealthy cluster fails a CI job that looks
    assert f"1 cluster(s) not healthy: {cluster.alias} (unhealthy)" in looked.err
    [row] = json.loads(looked.out)["items"]
    assert row["state"] == UNHEALTHY and "CrashLoopBackOff" in " ".join(row["reasons"])
    # The verdict is committed as reconcile commits its state: the checkout stays clean.
    assert b.git("status", "--porcelain") == ""
    assert "Clmgit-Action: record" in b.git("log", "-1", "--format=%B", "main")
    refused = sandbox.cli("promote", "dev", "alpha")
    assert refused.code == 1
    assert cluster.alias in refused.err and "Deployment platform/echo: pod" in refused.err
    assert "CrashLoopBackOff" in refused.err

    b.commit("dev", tagged("1.5"), "echo: fixed")
    assert sandbox.reconcile().code == 0
    start = datetime.now(UTC) + timedelta(minutes=1)
    for after in (1, 5, 11):
        ws = open_workspace(str(sandbox.path))
        observer = Observer(AwsBackends(Access(kubeconfig=str(sandbox.kubeconfig))).health,
                            workspace_gates(ws),
                            now=lambda a=after: start + timedelta(minutes=a))  # type: ignore[misc]  # a default
        [row] = observe_fleet(ws, observer, ws.clusters)
        assert row.state == HEALTHY, row.reasons
        at = start + timedelta(minutes=after, seconds=30)
        plan = plan_promotion(open_workspace(str(sandbox.path)), source="dev", target="alpha",
                              now=at)
        if after < 10:
            # healthy since the first of these looks, or since reconcile's right after the apply
            with pytest.raises(RefusedError, match=r"healthy for \S+ of 10m \(last observed"):
                check(plan)
    assert "Clmgit-Health: 1 healthy" in check(plan).message

    sandbox.fleet.server(cluster.alias).stop()
    ws = open_workspace(str(sandbox.path))
    observer = Observer(AwsBackends(Access(kubeconfig=str(sandbox.kubeconfig))).health,
                        workspace_gates(ws), now=lambda: start + timedelta(minutes=12))
    [row] = observe_fleet(ws, observer, ws.clusters)
    assert row.state == UNKNOWN and "cannot read the nodes" in row.reasons[0]
    with pytest.raises(RefusedError, match="1 unknown, 0 allowed"):
        check(plan_promotion(open_workspace(str(sandbox.path)), source="dev", target="alpha",
                             now=start + timedelta(minutes=13)))
