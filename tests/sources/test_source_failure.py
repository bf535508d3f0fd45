"""A config source that cannot be read fails each cluster pinned to it with a problem naming
the source, before any backend is asked for (nothing of any source is applied); one that an
unpinned channel follows stops the run in one sentence; a bad `override_channel` holds back its
cluster alone."""

from __future__ import annotations

import json
import shutil

from clmgit_sandbox.configrepo import cluster_record

from clmgit.reconcile.session import Options, reconcile
from clmgit.workspace import open_workspace
from tests.helpers.cli import run_cli
from tests.helpers.sources import two_sources


def test_an_unreadable_source_fails_the_pinned_cluster_naming_it(tmp_path) -> None:
    main_tree = {"cluster/stack.yaml": "Resources: {}\n"}
    addons_tree = {"cluster/manifests/app/cm.yaml": "kind: ConfigMap\n"}
    repos = two_sources(tmp_path, main_tree=main_tree, addons_tree=addons_tree, records=[
        cluster_record("aws:1:eu-central-1:beta-1", channel="beta")])
    assert run_cli("--repo", str(repos.main.path), "promote", "dev", "beta",
                   "--force").code == 0
    shutil.rmtree(repos.addons.path)
    asked: list[str] = []

    def backends(cluster):
        asked.append(cluster.id)
        raise AssertionError("no backend may be reached")

    ws = open_workspace(str(repos.main.path))
    [result] = reconcile(ws, Options(backends=backends))

    assert result.outcome == "failed"
    assert "config source 'addons' cannot be read" in result.detail
    assert asked == []
    [cluster] = open_workspace(str(repos.main.path)).clusters
    [problem] = cluster.status.problems
    assert "config source 'addons'" in problem.title + problem.detail


def test_a_bad_override_holds_back_that_cluster_alone(tmp_path) -> None:
    main_tree = {"cluster/stack.yaml": "Resources: {}\n"}
    addons_tree = {"cluster/manifests/app/cm.yaml": "kind: ConfigMap\n"}
    repos = two_sources(tmp_path, main_tree=main_tree, addons_tree=addons_tree, records=[
        cluster_record("aws:1:eu-central-1:dev-1", channel="dev",
                       config_items={"override_channel": " addons=dev"}),
        cluster_record("aws:1:eu-central-1:dev-2", channel="dev",
                       config_items={"override_channel": "addons=beta"})])
    main, addons = repos.sha("main", "dev"), repos.sha("addons", "beta")

    result = run_cli("--repo", str(repos.main.path), "status", "--output", "json")

    assert result.code == 0, result.err
    bad, good = json.loads(result.out)["items"]
    assert bad["state"] == "blocked"
    assert ("cluster dev-1: config item override_channel: ' addons' is not a config source"
            in bad["reason"])
    assert good["pinned_sha"] == f"main={main};addons={addons}"


def test_a_source_an_unpinned_channel_follows_stops_the_run(tmp_path) -> None:
    """The clusters follow an unpinned channel: the plan itself needs the source's branch head,
    so the run stops before any cluster, in one sentence naming the source."""
    repos = two_sources(tmp_path, main_tree={"cluster/stack.yaml": "Resources: {}\n"},
                        addons_tree={"cluster/manifests/app/cm.yaml": "kind: ConfigMap\n"},
                        records=[cluster_record("aws:1:eu-central-1:dev-1", channel="dev")])
    shutil.rmtree(repos.addons.path)

    result = run_cli("--repo", str(repos.main.path), "reconcile", "--dry-run")

    assert result.code == 1
    assert "config source 'addons' cannot be read" in result.err
