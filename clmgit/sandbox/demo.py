"""`make demo`: the promotion story on a throw-away config repo, in one screen.

Four channels (dev -> alpha -> beta -> stable), a few clusters in a clusters.yaml, promote with a
canary group first, status, history, and a promotion that is refused because it goes backwards.
"""

from __future__ import annotations

import shlex
import sys
import tempfile
from pathlib import Path

import yaml

from clmgit.model import desired_version, parse_cluster
from clmgit.sandbox.configrepo import (
    ConfigRepoBuilder,
    cluster_record,
    clusters_yaml,
    example_channels,
)


def say(text: str) -> None:
    print(f"\n\033[1m# {text}\033[0m" if sys.stdout.isatty() else f"\n# {text}", flush=True)


def clmgit(repo: Path, *args: str, expect: int = 0) -> None:
    import subprocess

    print(f"$ clmgit {shlex.join(args)}", flush=True)
    code = subprocess.run([sys.executable, "-m", "clmgit", "--repo", str(repo), *args]).returncode
    if code != expect:
        raise SystemExit(f"demo: expected exit code {expect}, got {code}")


def mark_applied(b: ConfigRepoBuilder, channel: str, sha: str) -> None:
    """Stand-in for a reconcile run: record `sha` as applied by every cluster of `channel`."""
    path = b.path / "clusters.yaml"
    data = yaml.safe_load(path.read_text())
    for record in data["clusters"]:
        if record["channel"] == channel:
            record["status"].update(
                current_version=desired_version(sha, parse_cluster(record, "demo")),
                applied_at="2026-01-01T00:00:00Z",
            )
    b.commit("main", {"clusters.yaml": clusters_yaml(data["clusters"])}, f"{channel} applied")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="clmgit-demo-") as tmp:
        b = ConfigRepoBuilder(Path(tmp) / "config")
        base = b.commit("dev", {"cluster/stack.yaml": "replicas: 1\n"}, "Add the main stack")
        for ch in ("alpha", "beta", "stable"):
            b.git("branch", ch, base)
        b.commit("dev", {"cluster/stack.yaml": "replicas: 2\n"}, "Run two API servers")
        head = b.commit("dev", {"cluster/stack.yaml": "replicas: 3\n"}, "Run three API servers")
        records = [
            cluster_record("aws:123456789012:eu-central-1:dev-1", channel="dev"),
            cluster_record("aws:123456789012:eu-central-1:alpha-1", channel="alpha"),
            cluster_record(
                "aws:123456789012:eu-central-1:beta-canary", channel="beta", alias="beta-canary"
            ),
            cluster_record("aws:123456789012:eu-central-1:beta-1", channel="beta"),
        ]
        b.commit(
            "main",
            {**example_channels(), "clusters.yaml": clusters_yaml(records)},
            "Add channels and clusters",
        )
        repo = b.path
        say(f"A config repo in {repo}: channels on main, configuration on dev/alpha/beta/stable")
        clmgit(repo, "status")
        say("alpha requires every dev cluster to run the commit first: refused")
        clmgit(repo, "promote", "dev", "alpha", expect=1)
        say("(reconcile is not part of this demo yet: we record dev as having applied it)")
        mark_applied(b, "dev", head)
        clmgit(repo, "promote", "dev", "alpha")
        mark_applied(b, "alpha", head)
        say("beta: the canary group first, with a preview of what it brings")
        clmgit(repo, "diff", "alpha", "beta", "--group", "canary")
        clmgit(repo, "promote", "alpha", "beta", "--group", "canary")
        clmgit(repo, "promote", "alpha", "beta")
        say("Promoting an older commit is refused: promotion only moves forward")
        clmgit(repo, "promote", "dev", "beta", "--sha", base, expect=1)
        say("Status and history")
        clmgit(repo, "status")
        clmgit(repo, "history")


if __name__ == "__main__":
    main()
