"""clmgit's cache directory, and what is made from a file kept by the file's content.

A file registry's checked records are kept here (`records.parse_file`): at 10,000 clusters they
load in a tenth of a second, where reading the YAML and checking it takes a couple. The key is the
SHA-256 of the file's bytes and of the kind of entry, so an entry is never stale
(docs/reference/caches.md).
"""

from __future__ import annotations

import hashlib
import os
import pickle
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
    entry = _entry(kind, text, ".pickle")
    try:
        return load(pickle.loads(entry.read_bytes()))
    except Exception:  # noqa: BLE001 - not cached yet, or damaged: made again
        pass
    data = make()
    _write(entry, lambda: pickle.dumps(dump(data), protocol=pickle.HIGHEST_PROTOCOL))
    return data


def _entry(kind: str, text: bytes, suffix: str) -> Path:
    digest = hashlib.sha256(kind.encode() + b"\0" + text).hexdigest()
    return cache_dir("yaml") / f"{digest}{suffix}"


def _write(entry: Path, encode: Callable[[], bytes]) -> None:
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(encode())
        os.replace(tmp, entry)
        _prune(entry.parent, f"*{entry.suffix}")
    except (OSError, TypeError, ValueError, pickle.PicklingError):
        pass  # a cache that cannot be written only costs time


def _prune(folder: Path, pattern: str) -> None:
    entries = sorted(folder.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        old.unlink(missing_ok=True)
