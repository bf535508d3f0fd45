"""Where the `cluster/` tree of a config repo comes from: git at a SHA, a directory, or memory.

Reconcile renders many clusters at the same few SHAs, often concurrently. The git source reads a
tree through one long-lived `git cat-file --batch` (`adapters.gitobjects`) — no clone, no
checkout, no process per read — and keeps the last few trees in a bounded, thread-safe cache, so
every cluster at a SHA shares one read.
Whatever is derived from a tree once (compiled templates) is memoised on the `ConfigTree` itself
and so lives exactly as long as the tree stays cached.

Symbolic links (CLM's layout, `follow_symlinks`): git stores a link as a blob of mode 120000
whose content is its target. CLM reads a checkout, so a link to a file or a directory inside
`cluster/` reads as what it points to; one that leaves `cluster/` (or points nowhere) is refused.
Without `follow_symlinks` links are skipped, as before.
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
SYMLINK_MODE = b"120000"
#: Links resolved per tree at most: more means links that lead into each other.
MAX_LINK_STEPS = 2_000
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
        return list(self.derived("listing", _listing)[0].get(directory.rstrip("/"), ()))

    def subdirs(self, directory: str) -> list[str]:
        """Names of the directories directly inside `directory`, sorted."""
        return list(self.derived("listing", _listing)[1].get(directory.rstrip("/"), ()))

    def derived(self, key: str, make: Callable[[ConfigTree], T]) -> T:
        """`make(self)`, computed once per tree and shared by every caller (thread-safe)."""
        with self._lock:
            if key not in self._derived:
                self._derived[key] = make(self)
            return self._derived[key]  # type: ignore[no-any-return]  # stored by make: a T


def _listing(tree: ConfigTree) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(files, subdirectory names) by directory, derived once per tree: every cluster rendered
    from the tree lists each directory again."""
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

    def __init__(self, repo: GitRepo, *, max_trees: int = 8,
                 follow_symlinks: bool = False) -> None:
        self.repo = repo
        self.follow_symlinks = follow_symlinks
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
        links: dict[str, str] = {}
        trees = [(CONFIG_DIR, root)]
        while trees:
            subtrees: list[tuple[str, str]] = []
            blobs: list[tuple[str, str]] = []
            symlinks: list[tuple[str, str]] = []
            for directory, tree in trees:
                for entry in tree_entries(tree):
                    path = f"{directory}/{entry.name}"
                    if entry.is_tree:
                        subtrees.append((path, entry.oid))
                    elif entry.is_file:
                        blobs.append((path, entry.oid))
                    elif entry.mode == SYMLINK_MODE and self.follow_symlinks:
                        symlinks.append((path, entry.oid))
            wanted = [oid for _, oid in subtrees + blobs + symlinks]
            objects = self._objects_by_id(sha, wanted, seen)
            trees = [(path, objects[oid]) for path, oid in subtrees]
            files.update((path, objects[oid].data) for path, oid in blobs)
            links.update((path, objects[oid].data.decode(errors="replace"))
                         for path, oid in symlinks)
        self._recent = seen
        if links:
            files = follow_links(files, links)
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


def follow_links(files: Mapping[str, bytes], links: Mapping[str, str]) -> dict[str, bytes]:
    """`files` with every link (path → target as written) read as what it points to: a file, or
    every file of a directory under the link's path. Refused (one sentence): a link that leaves
    `cluster/`, points nowhere, or belongs to a loop."""
    out = dict(files)
    work = [(link, link) for link in links]  # (path in the tree, the link it is)
    for _ in range(MAX_LINK_STEPS):
        if not work:
            return out
        path, link = work.pop()
        target = _canonical(path, links)
        if target in files:
            out[path] = files[target]
            continue
        inside = target + "/"
        found = [p for p in files if p.startswith(inside)]
        nested = [p for p in links if p.startswith(inside)]
        if not found and not nested:
            raise ConfigError(f"{link} is a symbolic link to {links[link]!r}, which is not in "
                              f"{CONFIG_DIR}/; fix or remove the link")
        out.update((path + p[len(target):], files[p]) for p in found)
        work += [(path + p[len(target):], p) for p in nested]
    raise ConfigError(f"the symbolic links in {CONFIG_DIR}/ lead into each other (at {path}); "
                      "break the loop")


def _canonical(path: str, links: Mapping[str, str]) -> str:
    """`path` with every link among its leading components replaced by its target."""
    for _ in range(40):  # the hops Linux allows
        parts = path.split("/")
        for i in range(2, len(parts) + 1):  # parts[0] is cluster/ itself
            prefix = "/".join(parts[:i])
            if prefix in links:
                path = posixpath.join(_link_target(prefix, links[prefix]), *parts[i:])
                break
        else:
            return path
    raise ConfigError(f"the symbolic links in {CONFIG_DIR}/ lead into each other (at {path}); "
                      "break the loop")


def _link_target(link: str, target: str) -> str:
    """The tree path a link points to; refused when that leaves `cluster/`."""
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
    if target.startswith("/") or not resolved.startswith(CONFIG_DIR + "/"):
        raise ConfigError(f"{link} is a symbolic link to {target!r}, outside {CONFIG_DIR}/; "
                          f"only links inside {CONFIG_DIR}/ are followed")
    return resolved


class DirectoryConfigSource:
    """A working tree on disk (`provision --directory`): its `cluster/`, or the directory itself
    when it has no `cluster/` inside. The SHA is ignored; the files are read once. With
    `follow_symlinks` (CLM's layout) links are read as in git: followed inside `cluster/`,
    refused when they leave it."""

    def __init__(self, path: str | os.PathLike[str], *, follow_symlinks: bool = False) -> None:
        path = Path(path)
        if not path.is_dir():
            raise ConfigError(f"{path} is not a directory")
        self.root = path / CONFIG_DIR if (path / CONFIG_DIR).is_dir() else path
        self.follow_symlinks = follow_symlinks
        self._tree: ConfigTree | None = None
        self._lock = threading.Lock()

    def files(self, sha: str = "") -> ConfigTree:
        with self._lock:
            if self._tree is None:
                files, links = self._scan()
                tree = follow_links(files, links) if links else files
                self._tree = ConfigTree(str(self.root), dict(sorted(tree.items())))
            return self._tree

    def _scan(self) -> tuple[dict[str, bytes], dict[str, str]]:
        """(files, links → their targets as written). With `follow_symlinks` every link is
        kept apart, not followed; without, a link to a file reads as that file and a link to
        a directory is skipped (`os.walk` does not descend into it)."""
        files: dict[str, bytes] = {}
        links: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel = Path(dirpath).relative_to(self.root).as_posix()
            for name in [*dirnames, *filenames]:
                full = Path(dirpath, name)
                if self.follow_symlinks and full.is_symlink():
                    links[self._path(rel, name)] = os.readlink(full)
                elif name in filenames and full.is_file():
                    files[self._path(rel, name)] = full.read_bytes()
        return files, links

    @staticmethod
    def _path(rel: str, name: str) -> str:
        return posixpath.normpath(posixpath.join(CONFIG_DIR, rel, name))
