"""Writing a report file whole or not at all: a reader (a browser, an artifact upload) never
sees half a page, and a failed write leaves the previous report in place."""

from __future__ import annotations

from pathlib import Path

from clmgit.cache import write_atomically
from clmgit.errors import ClmgitError


def write_report(path: str, text: str) -> Path:
    target = Path(path)
    if target.is_dir():
        raise ClmgitError(f"cannot write the report to {path}: it is a directory; name a file")
    try:
        write_atomically(target, text.encode(), mode=0o644)
    except OSError as e:
        raise ClmgitError(f"cannot write the report to {path}: {e.strerror or e}") from None
    return target.resolve()
