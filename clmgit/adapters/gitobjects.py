"""Objects read from a repository's object database by one long-lived `git cat-file --batch`.

Reconcile, `diff` and the controller read `cluster/` at several SHAs in one process. Starting
git for every read costs as much as the read itself (a process start is about 2 ms here; git
inflates the 260 deltified blobs of a large config in about 3 ms), and a process kept alive
also keeps git's cache of delta bases: the next SHA, which shares most of its files with the
last, reads faster still. Git rescans its packs when an object is missing, so objects fetched
while the process runs are found.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from clmgit.adapters.gitenv import failure, git_env
from clmgit.errors import GitError

#: Requests written before their answers are read. Bounded so that what is written always fits
#: in the pipe to git while git blocks on writing answers nobody reads yet.
_BATCH = 256


@dataclass(frozen=True)
class GitObject:
    oid: str  # hex
    kind: str  # blob, tree, commit or tag
    data: bytes


@dataclass(frozen=True)
class TreeEntry:
    mode: bytes
    name: str
    oid: str

    @property
    def is_tree(self) -> bool:
        return self.mode == b"40000"

    @property
    def is_file(self) -> bool:
        """A regular file; symlinks and submodules are not."""
        return self.mode in (b"100644", b"100755")


class ObjectReader:
    """`read` any object names git understands (`<sha>`, `<sha>:<path>`); thread-safe. The git
    process starts on the first read, restarts after a failure, and ends with `close`."""

    def __init__(self, git_dir: str | Path) -> None:
        self.git_dir = str(git_dir)
        self._lock = threading.Lock()
        self._proc: _CatFile | None = None

    def read(self, names: Sequence[str]) -> list[GitObject | None]:
        """The objects named, in order; None for a name that names no object."""
        if any("\n" in name for name in names):
            raise GitError("an object name cannot contain a line break")
        with self._lock:
            if self._proc is None:
                self._proc = _CatFile(self.git_dir)
            try:
                return [obj for start in range(0, len(names), _BATCH)
                        for obj in self._proc.batch(names[start:start + _BATCH])]
            except GitError:
                self._proc.close()
                self._proc = None
                raise

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                self._proc.close()
                self._proc = None


class _CatFile:
    def __init__(self, git_dir: str) -> None:
        self._stderr = tempfile.TemporaryFile()
        try:
            args = ["--git-dir", git_dir, "cat-file", "--batch"]
            self._popen = subprocess.Popen(
                ["git", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, env=git_env(args))
        except OSError as e:
            self._stderr.close()
            raise GitError(f"cannot run git: {e.strerror}") from None
        self._finalizer = weakref.finalize(self, _stop, self._popen, self._stderr)

    def batch(self, names: Sequence[str]) -> list[GitObject | None]:
        stdin, stdout = self._popen.stdin, self._popen.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write("".join(f"{name}\n" for name in names).encode())
            stdin.flush()
            return [self._answer(stdout) for _ in names]
        except (BrokenPipeError, ValueError):
            raise self._failure() from None

    def _answer(self, stdout: IO[bytes]) -> GitObject | None:
        header = stdout.readline().split()
        if not header:
            raise self._failure()
        if header[-1] in (b"missing", b"ambiguous"):  # `<name> missing`
            return None
        oid, kind, size = header[0].decode(), header[1].decode(), int(header[2])
        data = stdout.read(size + 1)  # the content and a newline
        if len(data) != size + 1:
            raise self._failure()
        return GitObject(oid, kind, data[:-1])

    def _failure(self) -> GitError:
        """What git said before it stopped (it is stopped if it has not)."""
        try:
            self._popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._popen.kill()
            self._popen.wait()
        self._stderr.seek(0)
        said = self._stderr.read()
        self.close()
        return GitError(failure(["cat-file"], self._popen.returncode, said))

    def close(self) -> None:
        self._finalizer()


def _stop(popen: subprocess.Popen[bytes], stderr: IO[bytes]) -> None:
    """End the process: closing its input is its signal to exit."""
    try:
        if popen.stdin is not None:
            popen.stdin.close()
        popen.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        popen.kill()
        popen.wait()
    finally:
        if popen.stdout is not None:
            popen.stdout.close()
        stderr.close()


def tree_entries(tree: GitObject) -> list[TreeEntry]:
    """The entries of a tree object, in git's order."""
    data, entries, pos = tree.data, [], 0
    width = len(tree.oid) // 2  # 20 bytes for SHA-1, 32 for SHA-256 repositories
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        oid = data[nul + 1:nul + 1 + width].hex()
        entries.append(TreeEntry(data[pos:space], data[space + 1:nul].decode(), oid))
        pos = nul + 1 + width
    return entries
