"""The file registry: a `clusters.yaml` in CLM's format (`clusters:` list of records).

Writes (docs/reference/clusters-yaml.md) hold a lock file beside the registry
(`.clusters.yaml.lock`, an OS lock that dies with its process), read the file afresh, splice the
change into its text (`filedoc.set_fields`: comments and formatting survive) and replace the file
atomically: a new file written and synced next to it, then renamed over it. A crash at any point
leaves either the old file or the new one, never a mix; two writers in turn lose nothing, because
each edits what the other wrote.

Leases are coordination, not data: they live in `.clusters.yaml.leases` (JSON) under the same
lock, so taking one does not touch the file people read and review.

None of that belongs in the checkout's history: the first write of a run adds the lock, lease
and temporary files to the repository's `.git/info/exclude` (once), and, holding the lock,
removes the temporary copies a killed write left (no other write can be under way then).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from filelock import FileLock

from clmgit.cache import write_atomically
from clmgit.errors import RegistryError
from clmgit.model import Cluster, ClusterStatus, Health, parse_cluster, status_to_dict
from clmgit.registry.base import LeaseLost, holder_is_dead
from clmgit.registry.filedoc import read_record, set_fields
from clmgit.registry.records import check_record, parse_file


class FileRegistry:
    def __init__(self, path: Path, *, now: Callable[[], float] = time.time) -> None:
        self.path = path
        self.location = str(path)
        self._now = now
        self._lock_path = path.with_name(f".{path.name}.lock")
        self._leases_path = path.with_name(f".{path.name}.leases")
        self._thread_lock = threading.Lock()  # the file lock is per process, not per thread
        self._tidied = False

    # --- reading ---------------------------------------------------------------------------

    def clusters(self) -> list[Cluster]:
        return parse_file(self._read(), str(self.path))

    def _read(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            raise RegistryError(
                f"no registry: {self.path} does not exist; pass --registry FILE or URL"
            ) from None
        except OSError as e:
            raise RegistryError(f"cannot read the registry {self.path}: {e.strerror}") from None

    # --- leases and writes -----------------------------------------------------------------

    def acquire(self, cluster_id: str, holder: str, ttl: float) -> Cluster | None:
        with self._locked():
            leases = self._leases()
            now = self._now()
            current = leases.get(cluster_id)
            if (current and current["holder"] != holder and float(current["expires"]) > now
                    and not holder_is_dead(str(current["holder"]))):
                return None
            # One record, not the whole file: after each write the parse cache is cold.
            record = read_record(self._read().decode(), cluster_id, name=str(self.path))
            cluster = parse_cluster(record, f"{self.path}: cluster {cluster_id}")
            check_record(cluster, str(self.path))
            leases[cluster_id] = {"holder": holder, "expires": now + ttl}
            self._write_leases(leases)
            return cluster

    def record(
        self,
        cluster_id: str,
        holder: str,
        *,
        status: ClusterStatus | None = None,
        lifecycle_status: str | None = None,
        release: bool = False,
    ) -> None:
        with self._locked():
            leases = self._leases()
            current = leases.get(cluster_id)
            if current is None or current["holder"] != holder:
                raise LeaseLost(
                    f"the lease of cluster {cluster_id} is no longer held by this run; "
                    "another reconciler took it over"
                )
            if status is not None or lifecycle_status is not None:
                text = self._read().decode()
                new = set_fields(
                    text, cluster_id, name=str(self.path), lifecycle_status=lifecycle_status,
                    status=None if status is None else status_to_dict(status),
                )
                write_atomically(self.path, new.encode(), mode=None, sync=True)
            if release:
                del leases[cluster_id]
                self._write_leases(leases)

    def record_health(self, cluster_id: str, health: Health) -> None:
        with self._locked():
            text = self._read().decode()
            record = read_record(text, cluster_id, name=str(self.path))
            status = parse_cluster(record, f"{self.path}: cluster {cluster_id}").status
            new = set_fields(text, cluster_id, name=str(self.path),
                             status=status_to_dict(replace(status, health=health)))
            write_atomically(self.path, new.encode(), mode=None, sync=True)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._thread_lock, FileLock(self._lock_path):
            if not self._tidied:
                self._tidied = True
                self._tidy()
            yield

    def _side_files(self) -> list[str]:
        """Names of the files beside the registry that clmgit makes (globs for the temporary
        ones, as `write_atomically` names them)."""
        return [self._lock_path.name, self._leases_path.name,
                *(f".{p.name}.*.tmp" for p in (self.path, self._leases_path))]

    def _tidy(self) -> None:
        """Under the lock, once per registry object: the side files excluded from git, and the
        temporary copies of killed writes removed."""
        for pattern in self._side_files()[2:]:
            for leftover in self.path.parent.glob(pattern):
                leftover.unlink(missing_ok=True)
        exclude_from_git(self.path.parent, self._side_files())

    def _leases(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self._leases_path.read_bytes())
        except (OSError, ValueError):  # none yet, or damaged: that only costs a lease
            return {}
        return data if isinstance(data, dict) else {}

    def _write_leases(self, leases: dict[str, dict[str, Any]]) -> None:
        # An expired lease stays until someone takes it over: until then its holder may finish.
        if leases:
            write_atomically(self._leases_path, json.dumps(leases, sort_keys=True).encode(),
                             mode=None, sync=True)
        else:
            self._leases_path.unlink(missing_ok=True)


def exclude_from_git(folder: Path, names: list[str]) -> None:
    """Add `names` to the `info/exclude` of the git repository `folder` is in (its common
    directory, for a linked worktree), each once; nothing outside a repository."""
    gitdir = _git_dir(folder)
    if gitdir is None:
        return
    exclude = gitdir / "info" / "exclude"
    try:
        present = exclude.read_text().splitlines() if exclude.exists() else []
        missing = [name for name in names if name not in present]
        if missing:
            exclude.parent.mkdir(parents=True, exist_ok=True)
            lead = "\n" if present and not exclude.read_text().endswith("\n") else ""
            with exclude.open("a") as f:
                f.write(lead + "# clmgit's file registry: lock, leases, copies in writing\n"
                        + "".join(f"{name}\n" for name in missing))
    except OSError:
        pass  # a repository we may not write: the files only show in `git status`


def _git_dir(folder: Path) -> Path | None:
    """The git directory that holds `info/exclude` for `folder`, or None outside a repo."""
    for candidate in (folder.resolve(), *folder.resolve().parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            # A linked worktree: `gitdir: <its own git dir>`, which names the common one (where
            # git reads info/exclude) in `commondir`.
            gitdir = Path(dot_git.read_text().partition("gitdir:")[2].strip())
            gitdir = gitdir if gitdir.is_absolute() else candidate / gitdir
            common = gitdir / "commondir"
            if common.is_file():
                return (gitdir / common.read_text().strip()).resolve()
            return gitdir
    return None


def clusters_yaml(records: list[dict[str, Any]]) -> str:
    """The text of a clusters.yaml in CLM's format holding `records` (leases are not part of it);
    `clmgit registry export` writes it, the sandbox and the tests build registries with it."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    body = yaml.dump({"clusters": records}, Dumper=dumper, sort_keys=False, allow_unicode=True)
    return "# The cluster registry: one record per cluster, in CLM's format.\n" + body
