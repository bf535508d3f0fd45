"""Writing a report file whole or not at all: a reader (a browser, an artifact upload) never
sees half a page, and a failed write leaves the previous report in place."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from clmgit.errors import ClmgitError


def write_report(path: str, text: str) -> Path:
    target = Path(path)
    if target.is_dir():
        raise ClmgitError(f"cannot write the report to {path}: it is a directory; name a file")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as e:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise ClmgitError(f"cannot write the report to {path}: {e.strerror or e}") from None
    return target.resolve()
