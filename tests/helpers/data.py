"""Test helper: where the tests' reference data is. Everything a test reads is in `tests/data/`
(see its README for where each file came from), except Zalando's kubernetes-on-aws corpus, which
is someone else's code and stays outside the repository (`../shared/corpus`, or
`CLMGIT_CORPUS`): the tests that use it skip, with one reason, where it is absent, and fail
instead where it must be there (CI, or `CLMGIT_REQUIRE_CORPUS=1`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from clmgit_sandbox.corpus import corpus_bundle

DATA = Path(__file__).resolve().parents[1] / "data"


def data_path(name: str) -> Path:
    """A file of `tests/data/`."""
    return DATA / name


def data_json(name: str) -> Any:
    """A JSON file of `tests/data/`, parsed."""
    return json.loads(data_path(name).read_text())


def corpus_required() -> bool:
    """True where the corpus must be present: in CI (`CI=true`), or when asked for."""
    return (os.environ.get("CI", "").lower() in {"1", "true", "yes"}
            or os.environ.get("CLMGIT_REQUIRE_CORPUS") == "1")


def corpus_or_skip() -> Path:
    """The corpus bundle's path; skips the calling test or module where it is absent (the one
    reason every corpus test gives), and fails it where the corpus is required."""
    bundle = corpus_bundle()
    if not bundle.exists():
        reason = (f"the kubernetes-on-aws corpus is absent: no {bundle} "
                  "(set CLMGIT_CORPUS to the folder holding kubernetes-on-aws.bundle)")
        if corpus_required():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason, allow_module_level=True)
    return bundle
