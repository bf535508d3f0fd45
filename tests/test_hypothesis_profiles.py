"""Hypothesis runs the full example count in CI and a tenth locally."""

from __future__ import annotations

import pytest

from tests.helpers.hypothesis_profiles import examples, profile_name


@pytest.mark.parametrize(("env", "expected"), [
    ({"CI": "true"}, "ci"), ({}, "dev"), ({"CI": "true", "HYPOTHESIS_PROFILE": "dev"}, "dev"),
    ({"HYPOTHESIS_PROFILE": "ci"}, "ci"),
])
def test_the_profile_follows_ci_unless_named(monkeypatch: pytest.MonkeyPatch,
                                             env: dict[str, str], expected: str) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert profile_name() == expected


def test_ci_keeps_the_full_count_and_dev_runs_a_tenth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "ci")
    assert [examples(n) for n in (8, 150, 2000)] == [8, 150, 2000]
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "dev")
    assert [examples(n) for n in (8, 150, 2000)] == [8, 15, 200]
