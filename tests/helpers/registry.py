"""Registry backends for tests (the `make_registry` and `local_postgres` fixtures are in
tests/conftest.py): the backend names, the token the servers accept, records to load, and a
server started on one backend (`start_server`)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from clmgit_sandbox.configrepo import cluster_record

from clmgit.model import parse_cluster
from clmgit.registry.http import HttpRegistry
from clmgit.registry.server.httpd import RegistryServer
from tests.helpers.data import data_path

BACKENDS = ("file", "sqlite", "postgresql")
TOKEN = "test-registry-token"
#: CLM's cluster registry API (Swagger 2), which the server's API is held to.
CLM_SPEC = data_path("clm-cluster-registry.yaml")

#: `make_registry(backend, records)` → the `--registry` spec of a registry holding `records`.
MakeRegistry = Callable[[str, list[dict[str, Any]]], str]


def records(count: int, *, channel: str = "beta") -> list[dict[str, Any]]:
    return [
        cluster_record(f"aws:123456789012:eu-central-1:c{i}", channel=channel) for i in range(count)
    ]

_numbers = itertools.count(1)


def start_server(backend: str, records: list[dict[str, Any]], *, folder: Path,
                 request: pytest.FixtureRequest) -> RegistryServer:
    """`registry serve` on 127.0.0.1 on `backend` ("sqlite" in `folder`, or "postgresql": a fresh
    database of the session's server), holding `records`, loaded through the API. The caller
    stops it."""
    n = next(_numbers)
    if backend == "sqlite":
        db = f"sqlite:///{folder / f'registry-{n}.db'}"
    elif backend == "postgresql":
        db = request.getfixturevalue("local_postgres").create_database(
            f"registry_{os.getpid()}_{n}")
    else:
        raise ValueError(f"unknown registry backend {backend!r}; use one of {BACKENDS}")
    server = RegistryServer(db, tokens=[TOKEN]).start()
    try:
        client = HttpRegistry(server.url, token=TOKEN)
        for i, record in enumerate(records):
            client.put_cluster(parse_cluster(record, f"record #{i + 1}"))
    except BaseException:
        server.stop()
        raise
    return server
