"""Fixtures for promotion pull requests: the GitHub API stand-in over the real `fleet` repo."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from clmgit_sandbox.github import GitHubStandIn

from tests.helpers.fleet import Fleet
from tests.helpers.github import REPOSITORY, TOKEN


@pytest.fixture
def github(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHubStandIn]:
    """The stand-in serving REPOSITORY from the fleet's bare origin, and the environment a
    GitHub Actions runner would give clmgit."""
    with GitHubStandIn(token=TOKEN, repos={REPOSITORY: fleet.origin}) as server:
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("GITHUB_REPOSITORY", REPOSITORY)
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        yield server
