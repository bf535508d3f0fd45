"""Where the `cluster/` tree of a config repo comes from: git at a SHA, a directory, or memory.

Reconcile renders many clusters at the same few SHAs, often concurrently. The git source reads a
tree through one long-lived `git cat-file --batch` (`adapters.gitobjects`) — no clone, no
checkout, no process per read — and keeps the last few trees in a bounded, thread-safe cache, so
every cluster at a SHA shares one read.
Whatever is derived from a tree once (compiled templates) is memoised on the `ConfigTree` itself
and so lives exactly as long as the tree stays cached.
"""

from __future__ import annotations

import os
import posixpath
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from clmgit.adapters.git import GitRepo
from clmgit.adapters.gitobjects import GitObject, ObjectReader, tree_entries
from clmgit.config.cache import LruCache
from clmgit.errors import ConfigError, GitError
from clmgit.model import SHA_RE

CONFIG_DIR = "cluster"
T = TypeVar("T")


class ConfigTree(Mapping[str, bytes]):
    """The files below `cluster/` (keys like `cluster/stack.yaml`) at one version, read-only."""

    def __init__(self, ref: str, files: Mapping[str, bytes]) -> None:
        #: The commit SHA the tree was read at, or the directory it was read from.
        self.ref = ref
        self._files = dict(files)
        self._derived: dict[str, Any] = {}
        # Re-entrant: one derived value may be made from another (render order lists directories).
        self._lock = threading.RLock()

    def __getitem__(self, path: str) -> bytes:
        return self._files[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def listdir(self, directory: str) -> list[str]:
        """Paths of the files directly inside `directory`, sorted."""
        return list(self._listing()[0].get(directory.rstrip("/"), ()))

    def subdirs(self, directory: str) -> list[str]:
        """Names of the directories directly inside `directory`, sorted."""
        return list(self._listing()[1].get(directory.rstrip("/"), ()))

    def _listing(self) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
        """(files, subdirectory names) by directory, built once: every cluster rendered from the
        tree lists each directory again."""
        return self.derived("listing", _listing)

    def derived(self, key: str, make: Callable[[ConfigTree], T]) -> T:
        """`make(self)`, computed once per tree and shared by every caller (thread-safe)."""
        with self._lock:
            if key not in self._derived:
                self._derived[key] = make(self)
            return self._derived[key]  # type: ignore[no-any-return]


def _listing(tree: ConfigTree) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    files: dict[str, list[str]] = {}
    dirs: dict[str, set[str]] = {}
    for path in tree:
        parent, _, _ = path.rpartition("/")
        files.setdefault(parent, []).append(path)
        while parent:
            parent, _, name = parent.rpartition("/")
            dirs.setdefault(parent, set()).add(name)
    return ({d: tuple(sorted(p)) for d, p in files.items()},
            {d: tuple(sorted(n)) for d, n in dirs.items()})


class ConfigSource(Protocol):
    """The `cluster/` tree of the config repo at a commit."""

    def files(self, sha: str) -> ConfigTree: ...


class GitConfigSource:
    """Trees read from a repository's object database, the last `max_trees` of them cached."""

    def __init__(self, repo: GitRepo, *, max_trees: int = 8) -> None:
        self.repo = repo
        self._cache: LruCache[str, ConfigTree] = LruCache(max_trees)
        self._objects = ObjectReader(repo.git_dir)
        #: Every object (trees and files) of the tree read last, by object id.
        self._recent: dict[str, GitObject] = {}

    def files(self, sha: str) -> ConfigTree:
        return self._cache.get_or_load(self._full_sha(sha), self._read)

    def close(self) -> None:
        """Stop the git process that reads objects (a later read starts another)."""
        self._objects.close()

    def _full_sha(self, sha: str) -> str:
        if SHA_RE.match(sha):
            return sha
        full = self.repo.rev(sha)
        if full is None:
            raise self._no_commit(sha)
        return full

    def _no_commit(self, sha: str) -> GitError:
        return GitError(f"commit {sha} does not exist in {self.repo.location}; fetch it first")

    def _read(self, sha: str) -> ConfigTree:
        commit, root = self._objects.read([sha, f"{sha}:{CONFIG_DIR}"])
        if commit is None or commit.kind != "commit":
            raise self._no_commit(sha)
        if root is None or root.kind != "tree":
            raise ConfigError(f"there is no {CONFIG_DIR}/ directory at commit {sha[:7]}")
        # One round trip per level of directories: the subdirectories found so far are read
        # together with the files found so far.
        seen = {root.oid: root}
        files: dict[str, bytes] = {}
        trees = [(CONFIG_DIR, root)]
        while trees:
            subtrees: list[tuple[str, str]] = []
            blobs: list[tuple[str, str]] = []
            for directory, tree in trees:
                for entry in tree_entries(tree):
                    if entry.is_tree:
                        subtrees.append((f"{directory}/{entry.name}", entry.oid))
                    elif entry.is_file:
                        blobs.append((f"{directory}/{entry.name}", entry.oid))
            objects = self._objects_by_id(sha, [oid for _, oid in subtrees + blobs], seen)
            trees = [(path, objects[oid]) for path, oid in subtrees]
            files.update((path, objects[oid].data) for path, oid in blobs)
        self._recent = seen
        return ConfigTree(sha, dict(sorted(files.items())))  # in path order, however read

    def _objects_by_id(self, sha: str, oids: list[str],
                       seen: dict[str, GitObject]) -> dict[str, GitObject]:
        """The objects: from the tree read last where it has them (the next commit changes few
        files, and a directory nobody touched keeps its object id), from git otherwise."""
        recent = self._recent
        missing = [oid for oid in dict.fromkeys(oids) if oid not in recent]
        found = {obj.oid: obj for obj in self._objects.read(missing) if obj is not None}
        if len(found) < len(missing):  # a shallow or partial clone, or a damaged one
            raise GitError(f"objects of commit {sha[:7]} are missing from {self.repo.location}; "
                           "fetch them first")
        objects = {oid: recent.get(oid) or found[oid] for oid in oids}
        seen.update(objects)
        return objects


class DirectoryConfigSource:
    """A working tree on disk (`provision --directory`): its `cluster/`, or the directory itself
    when it has no `cluster/` inside. The SHA is ignored; the files are read once."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        path = Path(path)
        if not path.is_dir():
            raise ConfigError(f"{path} is not a directory")
        self.root = path / CONFIG_DIR if (path / CONFIG_DIR).is_dir() else path
        self._tree: ConfigTree | None = None
        # Re-entrant: one derived value may be made from another (render order lists directories).
        self._lock = threading.RLock()

    def files(self, sha: str = "") -> ConfigTree:
        with self._lock:
            if self._tree is None:
                self._tree = ConfigTree(str(self.root), dict(self._walk()))
            return self._tree

    def _walk(self) -> Iterator[tuple[str, bytes]]:
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel = Path(dirpath).relative_to(self.root).as_posix()
            for name in sorted(filenames):
                full = Path(dirpath, name)
                if full.is_file():
                    path = posixpath.normpath(posixpath.join(CONFIG_DIR, rel, name))
                    yield path, full.read_bytes()


class StaticConfigSource:
    """Trees held in memory, by SHA: the in-memory fake of the seam, for tests."""

    def __init__(self, trees: Mapping[str, Mapping[str, bytes | str]]) -> None:
        self._trees = {
            sha: ConfigTree(sha, {p: d.encode() if isinstance(d, str) else d for p, d in f.items()})
            for sha, f in trees.items()
        }

    def files(self, sha: str) -> ConfigTree:
        try:
            return self._trees[sha]
        except KeyError:
            raise GitError(f"commit {sha} does not exist") from None
