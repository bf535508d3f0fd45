"""Every gate is judged with two config sources as with one: `healthy_in_source` and
`groups_before: healthy` refuse a promotion of two sources whose clusters were never observed
healthy (real repositories, the CLI as users run it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from clmgit_sandbox.configrepo import cluster_record

from clmgit.timestamps import format_timestamp
from tests.helpers.cli import run_cli
from tests.helpers.sources import TwoSources, two_sources

MAIN_TREE = {"cluster/stack.yaml": "v: 1\n"}
ADDONS_TREE = {"cluster/manifests/app/cm.yaml": "kind: ConfigMap\n"}
HEALTH_GATE = {
    "channels/dev.yaml": "channel: dev\nbranch: dev\n",
    "channels/beta.yaml": ("channel: beta\nsource: dev\ngates:\n"
                           "  healthy_in_source: {stable_for: 10m}\n"),
}
CANARY_HEALTHY = {
    "channels/dev.yaml": "channel: dev\nbranch: dev\n",
    "channels/beta.yaml": (
        "channel: beta\nsource: dev\ngates:\n  groups_before: healthy\ngroups:\n"
        "  - name: canary\n    selector: {alias: \"*-canary\"}\n  - name: default\n"),
}


def _applied(repos: TwoSources, *, healthy: bool = False) -> dict[str, object]:
    """A status that applied dev's pins of both sources an hour ago; with `healthy`, observed
    healthy on them since then."""
    now = datetime.now(UTC)
    version = f"main={repos.sha('main', 'dev')};addons={repos.sha('addons', 'dev')}#h"
    status: dict[str, object] = {"current_version": version,
                                 "applied_at": format_timestamp(now - timedelta(hours=1))}
    if healthy:
        status["health"] = {"state": "healthy", "version": version,
                            "observed_at": format_timestamp(now - timedelta(minutes=1)),
                            "healthy_since": format_timestamp(now - timedelta(minutes=50)),
                            "reasons": []}
    return status


def test_the_health_gate_refuses_two_sources_never_observed_healthy(tmp_path) -> None:
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=[],
                        channels=HEALTH_GATE)
    repos.main.commit("dev", {"cluster/stack.yaml": "v: 2\n"}, "Main v2")
    repos.addons.commit("dev", {"cluster/manifests/app/cm.yaml": "kind: Secret\n"}, "Addons v2")
    repos.set_clusters([cluster_record("aws:1:eu-central-1:dev-1", channel="dev",
                                       status=_applied(repos))])

    refused = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta", "--dry-run")

    assert refused.code == 1
    assert "1 of 1 clusters of 'dev' are not healthy" in refused.err
    repos.set_clusters([cluster_record("aws:1:eu-central-1:dev-1", channel="dev",
                                       status=_applied(repos, healthy=True))])
    allowed = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta")
    assert allowed.code == 0, allowed.err
    assert "Clmgit-Health: 1 healthy" in repos.main.git("log", "-1", "--format=%B", "main")


def test_groups_before_healthy_waits_for_a_healthy_canary_in_two_sources(tmp_path) -> None:
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=[],
                        channels=CANARY_HEALTHY)

    def canary(healthy: bool) -> None:
        repos.set_clusters([
            cluster_record("aws:1:eu-central-1:b-canary", channel="beta", alias="b-canary",
                           status=_applied(repos, healthy=healthy)),
            cluster_record("aws:1:eu-central-1:beta-1", channel="beta")])

    canary(healthy=False)
    cli = ("--repo", str(repos.main.path), "promote", "dev", "beta")
    assert run_cli(*cli, "--group", "canary").code == 0

    refused = run_cli(*cli, "--group", "default")
    canary(healthy=True)
    allowed = run_cli(*cli, "--group", "default")

    assert refused.code == 1
    assert "promotes a group only after the groups before it run" in refused.err
    assert "healthy; 1 cluster(s) do not: b-canary" in refused.err
    assert allowed.code == 0, allowed.err
