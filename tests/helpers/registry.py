"""Registry backends for tests (the `make_registry` and `local_postgres` fixtures are in
tests/conftest.py): the backend names, the token the servers accept, and records to load."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clmgit_sandbox.configrepo import cluster_record

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
