"""clmgit's cache directory, what is made from a file kept by the file's content, and the one
way clmgit writes a file whole or not at all (`write_atomically`).

A file registry's checked records are kept here (`records.parse_file`): at 10,000 clusters they
load in a tenth of a second, where reading the YAML and checking it takes a couple. The key is the
SHA-256 of the file's bytes and of the kind of entry, so an entry is never stale
(docs/reference/caches.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

KEEP = 16  # cached documents kept; older ones are pruned

_T = TypeVar("_T")


def cache_dir(kind: str) -> Path:
    base = os.environ.get("CLMGIT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "clmgit"
    )
    return Path(base) / kind


def memo_pickle(kind: str, text: bytes, make: Callable[[], _T], *,
                dump: Callable[[_T], Any] = lambda data: data,
                load: Callable[[Any], _T] = lambda data: data) -> _T:
    """`make()`, memoised on disk, pickled, by the SHA-256 of `text` (and `kind`); `dump` turns
    the result into what is pickled and `load` back. The project's own objects load as
    themselves: a registry of 10,000 records in a third of the time its JSON would take to
    load and be read again. The directory is the user's own cache, as trusted as the installed
    code (the compiled templates beside it are code that is run); `kind` must name the version
    of the classes pickled, so that another version of the code never loads them."""
    digest = hashlib.sha256(kind.encode() + b"\0" + text).hexdigest()
    entry = cache_dir("yaml") / f"{digest}.pickle"
    try:
        return load(pickle.loads(entry.read_bytes()))
    except Exception:  # noqa: BLE001 - not cached yet, or damaged: made again
        pass
    data = make()
    # A cache that cannot be written only costs time.
    with contextlib.suppress(OSError, TypeError, ValueError, pickle.PicklingError):
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(entry, pickle.dumps(dump(data), protocol=pickle.HIGHEST_PROTOCOL))
        _prune(entry.parent)
    return data


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        old.unlink(missing_ok=True)


def write_atomically(path: Path, data: bytes, *, mode: int | None = 0o666,
                     sync: bool = False) -> None:
    """Write `data` to a new file beside `path` (`.<name>.<random>.tmp`) and rename it over
    `path`: a reader, in this process or another, sees the old content or the new, never half.
    `mode` is the new file's (less the umask); None keeps the mode of the file replaced (0o600
    for a new one). `sync` puts the content and the rename on disk before returning, so that a
    crash keeps one or the other. An error leaves `path` as it was and no temporary file; it is
    raised, for the caller to say or to ignore."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    # O_EXCL: a temporary file never opens what is already there (a symlink in /tmp, say).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        if mode is None:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync:  # the rename, an entry of the folder, on disk too
        with contextlib.suppress(OSError):
            fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
