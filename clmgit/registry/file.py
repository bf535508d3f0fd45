"""The file registry: a `clusters.yaml` in CLM's format (`clusters:` list of records)."""

from __future__ import annotations

from pathlib import Path

from clmgit.cache import load_yaml
from clmgit.errors import RegistryError
from clmgit.model import Cluster, parse_cluster


class FileRegistry:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.location = str(path)

    def clusters(self) -> list[Cluster]:
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            raise RegistryError(
                f"no registry: {self.path} does not exist; pass --registry FILE or URL"
            ) from None
        except OSError as e:
            raise RegistryError(f"cannot read the registry {self.path}: {e.strerror}") from None
        data = load_yaml(text, str(self.path))
        if data is None:
            return []
        if not isinstance(data, dict) or not isinstance(data.get("clusters", []), list):
            raise RegistryError(f"{self.path}: expected a mapping with a `clusters:` list")
        records = data.get("clusters") or []
        clusters = [
            parse_cluster(r, f"{self.path}: cluster #{i + 1}") for i, r in enumerate(records)
        ]
        seen: set[str] = set()
        for c in clusters:
            if c.id in seen:
                raise RegistryError(f"{self.path}: cluster {c.id!r} is listed twice")
            seen.add(c.id)
        return clusters
