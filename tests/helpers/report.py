"""Config repos for the report's tests: the demo's world as `make demo` leaves it (without the
cloud: the registry records what its reconciles would), and a fleet in every state."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clmgit_sandbox.configrepo import ConfigRepoBuilder, example_records, init_example_repo
from clmgit_sandbox.configtree import cluster_tree

from clmgit.model import desired_version, parse_cluster
from clmgit.registry.file import clusters_yaml
from clmgit.timestamps import format_timestamp
from tests.helpers.cli import run_cli


def record_applied(b: ConfigRepoBuilder, records: list[dict[str, Any]],
                   applied: Mapping[str, str], *, at: datetime | None = None) -> None:
    """What a reconcile writes into the checkout's clusters.yaml: each named cluster (by alias)
    ready and at its SHA, applied now (or `at`)."""
    when = format_timestamp(at or datetime.now(UTC))
    for r in records:
        sha = applied.get(str(r["alias"]))
        if sha is None:
            continue
        r["lifecycle_status"] = "ready"
        version = desired_version(sha, parse_cluster(r, "test"))
        r["status"] = {"current_version": version, "last_version": "", "next_version": "",
                       "problems": [], "applied_at": when}
    (b.path / "clusters.yaml").write_text(clusters_yaml(records))


def demo_world(path: Path) -> tuple[ConfigRepoBuilder, str, str]:
    """The demo's story: version 2 on dev, promoted to alpha, then to beta's canary with an
    override of beta's soak; every cluster has applied its pin (just now). Returns the builder
    and the two versions."""
    b = init_example_repo(path)
    v1 = b.sha("dev")
    v2 = b.commit("dev", cluster_tree(2), "Worker image 0a0a0a02, tracing, drop legacy-settings")
    records = example_records()
    record_applied(b, records, {"dev-1": v2, "staging-1": v1, "prod-canary": v1})
    _ok(b, "promote", "dev", "alpha")
    record_applied(b, records, {"staging-1": v2})
    _ok(b, "promote", "alpha", "beta", "--group", "canary", "--force")
    record_applied(b, records, {"prod-canary": v2})
    return b, v1, v2


def _ok(b: ConfigRepoBuilder, *args: str) -> None:
    result = run_cli("--repo", str(b.path), *args)
    assert result.code == 0, result.err
