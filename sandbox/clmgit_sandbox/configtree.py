"""The example `cluster/` tree, in versions: what the demo, `make sandbox` and the end-to-end
tests apply on moto and the Kubernetes emulator.

Version 1 is `examples/config-repo/cluster/` as it is on disk, the tree a new user copies, so
the example and what the sandbox proves cannot drift apart. Version 2 changes what a promotion
typically changes: the worker image (so every node is outdated and rolled), a setting in a
manifest, and a `post_apply` deletion of a ConfigMap that version 1 created.
"""

from __future__ import annotations

from pathlib import Path

EXAMPLE_REPO = Path(__file__).resolve().parents[2] / "examples" / "config-repo"

LEGACY_DELETION = """\
pre_apply: []
post_apply:
  - kind: ConfigMap
    namespace: platform
    name: legacy-settings
"""


def example_files(folder: str) -> dict[str, str]:
    """The files under `examples/config-repo/<folder>`, by their path in a config repo."""
    root = EXAMPLE_REPO / folder
    return {path.relative_to(EXAMPLE_REPO).as_posix(): path.read_text()
            for path in sorted(root.rglob("*")) if path.is_file()}


def cluster_tree(version: int = 1) -> dict[str, str]:
    """The files of `cluster/` at config version 1 or 2."""
    files = example_files("cluster")
    if version < 2:
        return files
    files["cluster/config-defaults.yaml"] = files["cluster/config-defaults.yaml"].replace(
        "0a0a0a01", f"0a0a0a0{version}")
    files["cluster/manifests/platform/settings.yaml"] = files[
        "cluster/manifests/platform/settings.yaml"].replace(
        'log_level: "{{ cluster.config_items.log_level }}"',
        'log_level: "{{ cluster.config_items.log_level }}"\n  tracing: enabled')
    files["cluster/manifests/platform/echo.yaml"] = files[
        "cluster/manifests/platform/echo.yaml"].replace("echo:1.1", f"echo:1.{version}")
    files["cluster/manifests/deletions.yaml"] = LEGACY_DELETION
    del files["cluster/manifests/platform/legacy.yaml"]
    return files
