"""The cluster registry (docs/reference/clusters-yaml.md): the `Registry` seam (`base`), through
which reconcile lists clusters and records what it applied under a lease per cluster; its two
kinds, a `clusters.yaml` (`file`, `filedoc`; `records` reads and checks records as CLM does) and
CLM's HTTP Cluster Registry API (`http`); and the server of that API (`server`). Records are
`clmgit.model` values; what to apply to them is reconcile's. The package opens a registry by its
location.
"""

from __future__ import annotations

from pathlib import Path

from clmgit.errors import RegistryError
from clmgit.registry.base import (
    DEFAULT_LEASE_SECONDS,
    LeaseLost,
    Registry,
    RegistryUnavailable,
    holder_is_dead,
    new_holder,
)

__all__ = ["DEFAULT_LEASE_SECONDS", "LeaseLost", "Registry", "RegistryUnavailable",
           "holder_is_dead", "new_holder", "open_registry"]


def open_registry(spec: str | None, *, default_dir: Path | None) -> Registry:
    """The registry named by `--registry` (a file path or an http(s) URL), else `clusters.yaml`
    at the top of the config repo's checkout."""
    from clmgit.registry.file import FileRegistry

    if spec and spec.startswith(("http://", "https://")):
        from clmgit.registry.http import HttpRegistry

        return HttpRegistry(spec)
    if spec:
        return FileRegistry(Path(spec))
    if default_dir is None:
        raise RegistryError("no registry: the config repo has no checkout; pass --registry FILE")
    return FileRegistry(default_dir / "clusters.yaml")
