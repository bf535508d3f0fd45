"""The cluster registry seam: where clusters are listed and their applied status is recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from clmgit.errors import RegistryError
from clmgit.model import Cluster


class Registry(Protocol):
    """Lists clusters; records what was applied to them."""

    location: str

    def clusters(self) -> list[Cluster]: ...


def open_registry(spec: str | None, *, default_dir: Path | None) -> Registry:
    """The registry named by `--registry` (a file path or an http(s) URL), else `clusters.yaml`
    at the top of the config repo's checkout."""
    from clmgit.registry.file import FileRegistry

    if spec and spec.startswith(("http://", "https://")):
        raise RegistryError(
            f"the HTTP registry at {spec} is not supported yet; use a clusters.yaml"
        )
    if spec:
        return FileRegistry(Path(spec))
    if default_dir is None:
        raise RegistryError("no registry: the config repo has no checkout; pass --registry FILE")
    return FileRegistry(default_dir / "clusters.yaml")
