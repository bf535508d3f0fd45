"""Registry backends for tests: `make_registry(backend, records)` gives a `--registry` spec.

For "file" it writes a clusters.yaml; for "sqlite" and "postgresql" it starts the registry
server on 127.0.0.1 and a free port (PostgreSQL: a real server, one per test session, a fresh
database per registry), sets `CLMGIT_REGISTRY_TOKEN`, loads the records through the API and
returns the server's URL. Everything started is stopped at the end of the test.

Without PostgreSQL installed the "postgresql" backend skips, unless `CLMGIT_REQUIRE_POSTGRES=1`
(set by .ci/run), where it fails.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from clmgit.model import parse_cluster
from clmgit.registry.file import clusters_yaml
from clmgit.registry.http import HttpRegistry
from clmgit.registry.server.httpd import RegistryServer
from clmgit.sandbox.configrepo import cluster_record
from clmgit.sandbox.localpg import LocalPostgres, find_pg_ctl

BACKENDS = ("file", "sqlite", "postgresql")
TOKEN = "test-registry-token"

MakeRegistry = Callable[[str, list[dict[str, Any]]], str]


def records(count: int, *, channel: str = "beta") -> list[dict[str, Any]]:
    return [
        cluster_record(f"aws:123456789012:eu-central-1:c{i}", channel=channel) for i in range(count)
    ]


@pytest.fixture(scope="session")
def local_postgres() -> Iterator[LocalPostgres]:
    if find_pg_ctl() is None:
        reason = "PostgreSQL is not installed (no pg_ctl); .ci/run installs it"
        if os.environ.get("CLMGIT_REQUIRE_POSTGRES") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    with LocalPostgres() as pg:
        yield pg


_numbers = itertools.count(1)


@pytest.fixture
def make_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[MakeRegistry]:
    monkeypatch.setenv("CLMGIT_REGISTRY_TOKEN", TOKEN)
    servers: list[RegistryServer] = []

    def make(backend: str, records: list[dict[str, Any]]) -> str:
        n = next(_numbers)
        if backend == "file":
            path = tmp_path / f"clusters-{n}.yaml"
            path.write_text(clusters_yaml(records))
            return str(path)
        if backend == "sqlite":
            db = f"sqlite:///{tmp_path / f'registry-{n}.db'}"
        elif backend == "postgresql":
            pg: LocalPostgres = request.getfixturevalue("local_postgres")
            db = pg.create_database(f"registry_{os.getpid()}_{n}")
        else:
            raise ValueError(f"unknown registry backend {backend!r}; use one of {BACKENDS}")
        server = RegistryServer(db, tokens=[TOKEN]).start()
        servers.append(server)
        client = HttpRegistry(server.url, token=TOKEN)
        for i, record in enumerate(records):
            client.put_cluster(parse_cluster(record, f"record #{i + 1}"))
        return server.url

    yield make
    for server in servers:
        server.stop()
