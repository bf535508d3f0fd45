"""The one form of a git failure, for every way clmgit runs git (`git.py`'s runner and
`gitobjects.py`'s object reader)."""

from __future__ import annotations

from collections.abc import Sequence

from clmgit.adapters.gitenv import git_command
from clmgit.redact import redact


def failure(args: Sequence[str], code: int | None, stderr: bytes | str) -> str:
    """The one form of a git failure: the command, its exit code and what git said (one line,
    credentials in URLs hidden)."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    said = "; ".join(ln.strip() for ln in text.splitlines() if ln.strip())
    command = git_command(args)
    exit_code = "killed" if code is None or code < 0 else f"exit {code}"
    return redact(f"git {command} failed ({exit_code}): {said[:300] or 'no message'}")
