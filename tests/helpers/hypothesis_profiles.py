"""Test helper: how many examples Hypothesis runs. CI runs the full count (profile `ci`); a local
run (profile `dev`, the default outside CI) runs a tenth of it, at least 10 per test, so the
edit-run loop stays fast. `HYPOTHESIS_PROFILE=ci` runs the full count locally."""

from __future__ import annotations

import os

from hypothesis import settings

#: A local run's examples per test where a test names no count (Hypothesis's own default: 100).
DEV_EXAMPLES = 20


def profile_name() -> str:
    """`HYPOTHESIS_PROFILE` if set, else `ci` under CI (`CI=true`), else `dev`."""
    if os.environ.get("HYPOTHESIS_PROFILE"):
        return os.environ["HYPOTHESIS_PROFILE"]
    return "ci" if os.environ.get("CI", "").lower() in {"1", "true", "yes"} else "dev"


def examples(full: int) -> int:
    """A test's example count: `full` under the `ci` profile, a tenth (at least 10) under `dev`."""
    return full if profile_name() == "ci" else min(full, max(10, full // 10))


def load_profiles() -> None:
    """Register both profiles and load the one `profile_name` chooses. Property tests judge what
    an example does, never how fast (on a busy machine Hypothesis's 200 ms deadline per example
    once failed a yamledit round trip): no deadline in either; speed is measured in bench/."""
    settings.register_profile("ci", deadline=None)
    settings.register_profile("dev", deadline=None, max_examples=DEV_EXAMPLES)
    settings.load_profile(profile_name())
