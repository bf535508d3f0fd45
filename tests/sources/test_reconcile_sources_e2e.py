"""Two config sources reconciled end to end through the CLI, on moto and the Kubernetes
emulator: the main source's stacks and the add-on source's cf-manifests stack are made, both
sources' manifests applied (`addons/<component>`), the deletions run after every manifest, and
the recorded version is CLM's `main=<sha>;addons=<sha>#<hash>`."""

from __future__ import annotations

import json

import pytest
from clmgit_sandbox.configtree import cluster_tree
from clmgit_sandbox.fleet import LocalFleet

from clmgit.model import cluster_hash, parse_cluster, with_lifecycle
from tests.helpers.cli import run_cli
from tests.helpers.sandbox import make_records
from tests.helpers.sources import two_sources

pytestmark = pytest.mark.slow

ADDONS = {
    "cluster/stack.yaml": "this: is never read\n",  # the main stack is the main source's
    "cluster/config-defaults.yaml": "log_level: debug\naddon_color: blue\n",
    "cluster/cf-manifests/queue.yaml": (
        "Resources:\n  Queue:\n    Type: AWS::SQS::Queue\n"
        "    Properties: {QueueName: \"q-{{ cluster.local_id }}\"}\n"),
    "cluster/manifests/app/addon.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: addon, namespace: platform}\n"
        "data: {color: \"{{ cluster.config_items.addon_color }}\"}\n"),
    # After every manifest of every source: the main source's legacy ConfigMap goes again.
    "cluster/manifests/deletions.yaml": (
        "post_apply:\n  - {kind: ConfigMap, namespace: platform, name: legacy-settings}\n"),
}


def test_reconcile_applies_both_sources_in_clms_order(moto_endpoint, tmp_path) -> None:
    [record] = make_records(1)
    repos = two_sources(tmp_path, main_tree=cluster_tree(1), addons_tree=ADDONS,
                        records=[record])
    cluster = parse_cluster(record, "record")
    cli = ("--repo", str(repos.main.path))
    with LocalFleet([cluster], tmp_path / "kubeconfig") as fleet:
        result = run_cli(*cli, "reconcile", "--kubeconfig", str(fleet.kubeconfig),
                         "--output", "json")

        assert result.code == 0, result.err + result.out
        # CLM's order: the main stack, cf-manifests of main then addons, the pool; the main
        # source's components, then the add-on's; post_apply deletions after every manifest.
        local = cluster.local_id
        assert [c.split(":")[0] for c in json.loads(result.out)["items"][0]["changes"]] == [
            f"stack {local}", f"stack logs-{local}", f"stack queue-{local}",
            f"stack nodepool-default-worker-{local}", "Namespace platform",
            "Deployment platform/echo", "ConfigMap platform/legacy-settings",
            "ConfigMap platform/platform-settings", "ConfigMap platform/addon", "post_apply"]
        server = fleet.server(cluster.alias)
        maps = {o["metadata"]["name"]: o for o in server.objects("v1", "ConfigMap")
                if o["metadata"].get("namespace") == "platform"}
        assert maps["addon"]["data"] == {"color": "blue"}
        assert maps["platform-settings"]["data"]["log_level"] == "debug"  # later source wins
        assert "legacy-settings" not in maps
    main, addons = repos.sha("main", "dev"), repos.sha("addons", "dev")
    done = run_cli(*cli, "status", "--output", "json")
    assert done.code == 0, done.err
    after = parse_cluster(record | {"lifecycle_status": "ready"}, "record")
    clm = f"main={main};addons={addons}#{cluster_hash(with_lifecycle(after, 'ready'))}"
    assert clm in (repos.main.path / "clusters.yaml").read_text()
    assert f"queue-{cluster.local_id}" in result.out
