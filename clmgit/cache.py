"""clmgit's cache directory, and parsed YAML cached by content digest.

Parsing a 1,000-cluster `clusters.yaml` costs about half a second even with libyaml; the same
data as JSON loads in a few milliseconds. The key is the SHA-256 of the file's bytes, so a cached
entry is never stale.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clmgit import yamledit

KEEP = 16  # cached documents kept; older ones are pruned


def cache_dir(kind: str) -> Path:
    base = os.environ.get("CLMGIT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "clmgit"
    )
    return Path(base) / kind


def load_yaml(text: bytes, name: str) -> Any:
    """`yamledit.load` + `normalize`, memoised on disk by content."""
    return memo_json("yaml", text, lambda: yamledit.normalize(yamledit.load(text, name)))


def memo_json(kind: str, text: bytes, make: Callable[[], Any], *,
              dump: Callable[[Any], Any] = lambda data: data,
              load: Callable[[Any], Any] = lambda data: data) -> Any:
    """`make()`, memoised on disk as JSON by the SHA-256 of `text` (and `kind`); `dump` turns
    the result into JSON data and `load` back."""
    folder = cache_dir("yaml")
    digest = hashlib.sha256(kind.encode() + b"\0" + text).hexdigest()
    entry = folder / f"{digest}.json"
    try:
        return load(json.loads(entry.read_bytes()))
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not cached yet, or an entry this version cannot read: made again
    data = make()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(dump(data)))
        os.replace(tmp, entry)
        _prune(folder)
    except (OSError, TypeError, ValueError):
        pass  # a cache that cannot be written only costs time
    return data


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        old.unlink(missing_ok=True)
