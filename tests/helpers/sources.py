"""Two real config sources, each a git repository with a bare origin: `main` (this repository,
with the control branch) and `addons` (a second repository named by path in `clmgit.yaml`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from clmgit_sandbox.configrepo import ConfigRepoBuilder

from clmgit.registry.file import clusters_yaml

CHANNELS = {
    "channels/dev.yaml": "channel: dev\nbranch: dev\n",
    "channels/beta.yaml": (
        "# beta: pinned per group\n"
        "channel: beta\n"
        "source: dev\n"
        "gates:\n"
        "  applied_in_source: true\n"
        "groups:\n"
        "  - name: canary\n"
        "    selector: {alias: \"*-canary\"}\n"
        "  - name: default   # the rest\n"
    ),
}


@dataclass
class TwoSources:
    main: ConfigRepoBuilder
    addons: ConfigRepoBuilder
    main_origin: Path
    addons_origin: Path

    def sha(self, source: str, ref: str) -> str:
        return (self.main if source == "main" else self.addons).sha(ref)

    def set_clusters(self, records: list[dict[str, object]]) -> None:
        self.main.commit("main", {"clusters.yaml": clusters_yaml(records)}, "Clusters")


def two_sources(tmp_path: Path, *, main_tree: Mapping[str, str],
                addons_tree: Mapping[str, str], records: list[dict[str, object]],
                settings: str = "", channels: Mapping[str, str] = CHANNELS) -> TwoSources:
    """`main_tree` and `addons_tree` committed on `dev` of each source, `beta` branched there."""
    addons = ConfigRepoBuilder(tmp_path / "addons")
    addons.commit("dev", dict(addons_tree), "Add-ons")
    addons.git("branch", "beta", "dev")
    main = ConfigRepoBuilder(tmp_path / "config")
    main.commit("dev", dict(main_tree), "Base")
    main.git("branch", "beta", "dev")
    text = ("sources:\n  - name: main\n  - name: addons\n"
            f"    repo: {tmp_path / 'addons'}\n{settings}")
    main.commit("main", {**channels, "clmgit.yaml": text,
                         "clusters.yaml": clusters_yaml(records)}, "Channels, sources, clusters")
    return TwoSources(main, addons, main.add_origin(), addons.add_origin())
