"""Fixtures of the registry tests: a running SQLite-backed server with a client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from clmgit.registry.http import HttpRegistry
from clmgit.registry.server.httpd import RegistryServer
from tests.helpers.registry import TOKEN


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    with RegistryServer(f"sqlite:///{tmp_path / 'registry.db'}", tokens=[TOKEN, "second"]) as s:
        yield s


@pytest.fixture
def client(server: RegistryServer) -> HttpRegistry:
    return HttpRegistry(server.url, token=TOKEN)


@pytest.fixture
def http(server: RegistryServer) -> Iterator[requests.Session]:
    """Raw HTTP with the token, for what the client does not send (bad input, ETags)."""
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {TOKEN}"
    yield session
    session.close()
