"""Where the real kubernetes-on-aws corpus is: `CLMGIT_CORPUS`, else `shared/corpus` beside the
checkout or beside any directory above it (a worktree sits a level deeper than a clone)."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
NAME = "kubernetes-on-aws.bundle"


def corpus_bundle() -> Path:
    """The bundle's path; it may not exist (tests skip and benchmarks say so, naming the path)."""
    if "CLMGIT_CORPUS" in os.environ:
        return Path(os.environ["CLMGIT_CORPUS"]) / NAME
    beside = [p / "shared" / "corpus" / NAME for p in PROJECT.parents]
    return next((b for b in beside if b.exists()), beside[0])
