"""A real config repo with four channels and a bare origin (the `fleet` fixture)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record, example_channels

from clmgit.registry.file import clusters_yaml
from tests.helpers.cli import Result, run_cli


@dataclass
class Fleet:
    """A config repo: dev has three commits to cluster/, alpha/beta/stable are at the first."""

    builder: ConfigRepoBuilder
    path: Path
    origin: Path
    c1: str
    c2: str
    c3: str

    def cli(self, *args: str) -> Result:
        return run_cli("--repo", str(self.path), *args)

    def file(self, name: str) -> str:
        return (self.path / name).read_text()

    def branch(self, name: str) -> str:
        return self.builder.sha(name)

    def set_clusters(self, records: list[dict[str, object]]) -> None:
        self.builder.commit("main", {"clusters.yaml": clusters_yaml(records)}, "Update clusters")


def default_records() -> list[dict[str, Any]]:
    return [
        cluster_record("aws:123456789012:eu-central-1:dev-1", channel="dev"),
        cluster_record("aws:123456789012:eu-central-1:alpha-1", channel="alpha"),
        cluster_record(
            "aws:123456789012:eu-central-1:beta-canary", channel="beta", alias="beta-canary"
        ),
        cluster_record("aws:123456789012:eu-central-1:beta-1", channel="beta"),
        cluster_record(
            "aws:123456789012:eu-central-1:prod-1", channel="stable", environment="production"
        ),
    ]


def make_fleet(path: Path) -> Fleet:
    """The fleet's repository at `path` (its origin beside it)."""
    b = ConfigRepoBuilder(path)
    c1 = b.commit("dev", {"cluster/stack.yaml": "v: 1\n",
                          "cluster/node-pools/worker-default/stack.yaml": "Resources: {}\n"},
                  "Add the main stack")
    for ch in ("alpha", "beta", "stable"):
        b.git("branch", ch, c1)
    c2 = b.commit("dev", {"cluster/stack.yaml": "v: 2\n"}, "Raise the version to 2")
    b.commit("dev", {"README.md": "docs\n"}, "Docs only")
    c3 = b.commit("dev", {"cluster/stack.yaml": "v: 3\n"}, "Raise the version to 3")
    b.commit(
        "main",
        {**example_channels(), "clusters.yaml": clusters_yaml(default_records())},
        "Add channels and clusters",
    )
    origin = b.add_origin()
    return Fleet(b, b.path, origin, c1, c2, c3)


def copy_fleet(template: Fleet, path: Path) -> Fleet:
    """A copy of `template`'s repository (and its origin) at `path`: the same commits, made in
    a few milliseconds instead of the dozen git commands that build one. The copy's `origin`
    is its own."""
    origin = path.parent / template.origin.name
    shutil.copytree(template.path, path, symlinks=True)
    shutil.copytree(template.origin, origin, symlinks=True)
    builder = ConfigRepoBuilder(path, create=False)
    builder.git("remote", "set-url", "origin", str(origin))
    # The copied index records the template's inodes; git refuses to merge into entries whose
    # stat data no longer matches until it has looked again.
    builder.git("update-index", "-q", "--refresh")
    return Fleet(builder, path, origin, template.c1, template.c2, template.c3)
