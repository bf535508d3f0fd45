"""Fixtures shared by every test directory: clmgit's cache out of the user's home, a real config
repo with four channels and a bare origin (`fleet`), moto in server mode (one per test session)
and the Kubernetes API emulator (one per test), reached through boto3 and the official client
only, and registry backends. Helpers that are not fixtures are in tests/helpers/."""

from __future__ import annotations

import functools
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clmgit_sandbox.aws import moto_server
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.localpg import LocalPostgres, find_pg_ctl
from kubernetes import client, config
from kubernetes.dynamic import DynamicClient

from clmgit.registry.file import clusters_yaml
from clmgit.registry.server.httpd import RegistryServer
from tests.helpers.fleet import Fleet, copy_fleet, make_fleet
from tests.helpers.hypothesis_profiles import load_profiles
from tests.helpers.kube import CONTEXT, RawCall
from tests.helpers.registry import TOKEN, MakeRegistry, start_server

# Hypothesis: the full example count in CI, a tenth locally (tests/helpers/hypothesis_profiles.py).
load_profiles()


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory):
    """Keep clmgit's cache (parsed registries, repo mirrors) out of the user's home."""
    mp = pytest.MonkeyPatch()
    mp.setenv("CLMGIT_CACHE_DIR", str(tmp_path_factory.mktemp("clmgit-cache")))
    yield
    mp.undo()


@pytest.fixture(autouse=True, scope="session")
def _no_inherited_width():
    """Tables are cut to `COLUMNS`; pytest-xdist's workers inherit COLUMNS=80, which would cut
    every table a test reads. A test that means a width sets it."""
    mp = pytest.MonkeyPatch()
    mp.delenv("COLUMNS", raising=False)
    yield
    mp.undo()


@pytest.fixture(autouse=True, scope="session")
def _one_model_reader() -> Iterator[None]:
    """Every botocore session of the test process shares one reader of service models, as
    clmgit's own sessions do (`session_for`): the tests make a session wherever they look at
    moto, and each new one parsed `endpoints.json` and every service model again — a seventh of
    the kubernetes-on-aws takeover test."""
    import botocore.loaders
    import botocore.session

    mp = pytest.MonkeyPatch()
    mp.setattr(botocore.session, "create_loader", functools.cache(botocore.loaders.create_loader))
    yield
    mp.undo()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The end-to-end tests (marked slow) first, each group still in the order the random order
    drew. xdist hands each worker half of the list and a worker that runs dry steals from the
    end of the other's: with a minute-long test late in the list, one worker ran it alone at
    the end of the run."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The random order's seed (pytest-random-order), also under `-q`, which hides the header."""
    if not config.pluginmanager.hasplugin("random_order"):
        return
    from random_order.config import Config as RandomOrder

    order = RandomOrder(config)
    if order.is_enabled:
        terminalreporter.write_line(f"test order: random by {order.bucket_type}, seed "
                                    f"{order.seed} (again: --random-order-seed={order.seed})")


@pytest.fixture(scope="session")
def _fleet_template(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """The fleet's repository built once per session (per xdist worker); each test copies it."""
    return make_fleet(tmp_path_factory.mktemp("fleet") / "config")


@pytest.fixture
def fleet(tmp_path: Path, _fleet_template: Fleet) -> Fleet:
    return copy_fleet(_fleet_template, tmp_path / "config")


# -- moto and the Kubernetes emulator ---------------------------------------------------------

@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """moto on 127.0.0.1 and a free port for the whole session; `AWS_ENDPOINT_URL` and throw-away
    credentials point boto3 at it. Tests keep apart by giving their clusters unique ids."""
    with moto_server() as endpoint:
        yield endpoint


@pytest.fixture
def kube_server() -> Iterator[KubeAPIServer]:
    """A fresh emulator on a free port of 127.0.0.1, stopped after the test."""
    with KubeAPIServer() as server:
        yield server


@pytest.fixture
def kubeconfig(kube_server: KubeAPIServer, tmp_path: Path) -> Path:
    return kube_server.write_kubeconfig(tmp_path / "kubeconfig", context_names=[CONTEXT])


@pytest.fixture
def api_client(kubeconfig: Path) -> Iterator[client.ApiClient]:
    api = config.new_client_from_config(str(kubeconfig), context=CONTEXT)
    yield api
    api.close()


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


@pytest.fixture
def policy(api_client: client.ApiClient) -> client.PolicyV1Api:
    return client.PolicyV1Api(api_client)


@pytest.fixture
def dynamic(api_client: client.ApiClient, tmp_path: Path) -> DynamicClient:
    # A discovery cache of its own: the default one is shared by host:port across runs.
    return DynamicClient(api_client, cache_file=str(tmp_path / "discovery.json"))


@pytest.fixture
def raw_call(api_client: client.ApiClient) -> RawCall:
    """A call through the official client's own request machinery (auth included), for bodies and
    paths the generated APIs cannot express; returns (HTTP status, decoded body) without raising."""

    def call(
        method: str, path: str, *, body: Any = None, content_type: str | None = None,
        accept: str = "application/json",
    ) -> tuple[int, Any]:
        headers = {"Accept": accept}
        if content_type:
            headers["Content-Type"] = content_type
        request = api_client.param_serialize(
            method, path, header_params=headers, body=body, auth_settings=["BearerToken"]
        )
        response = api_client.call_api(*request)
        response.read()
        text = response.data.decode()
        return response.status, json.loads(text) if text.startswith("{") else text

    return call


# -- registry backends ------------------------------------------------------------------------
# `make_registry(backend, records)` gives a `--registry` spec. For "file" it writes a
# clusters.yaml; for "sqlite" and "postgresql" it starts the registry server on 127.0.0.1 and a
# free port (PostgreSQL: a real server, one per test session, a fresh database per registry),
# sets `CLMGIT_REGISTRY_TOKEN`, loads the records through the API and returns the server's URL.
# Everything started is stopped at the end of the test. Without PostgreSQL installed the
# "postgresql" backend skips, unless `CLMGIT_REQUIRE_POSTGRES=1` (set by .ci/run): it fails.


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
        if backend == "file":
            path = tmp_path / f"clusters-{next(_numbers)}.yaml"
            path.write_text(clusters_yaml(records))
            return str(path)
        servers.append(start_server(backend, records, folder=tmp_path, request=request))
        return servers[-1].url

    yield make
    for server in servers:
        server.stop()
