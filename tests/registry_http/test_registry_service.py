"""`clmgit registry serve --metrics-port`: the real server process on PostgreSQL, its requests
counted by route template, and /readyz following the database as it goes and comes back."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import requests
from clmgit_sandbox.localpg import LocalPostgres, find_pg_ctl

from tests.helpers.processes import read_until
from tests.helpers.scrape import free_port, get, samples, value

pytestmark = [
    pytest.mark.slow,  # a PostgreSQL server and the registry server as real processes
    pytest.mark.skipif(find_pg_ctl() is None and not os.environ.get("CLMGIT_REQUIRE_POSTGRES"),
                       reason="PostgreSQL (pg_ctl) is not installed"),
]


def _wait_for(url: str, status: int, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while (answer := get(url))[0] != status:
        assert time.monotonic() < deadline, f"{url} still answers {answer}"
        time.sleep(0.1)
    return answer[1]


def test_the_registry_server_serves_metrics_health_and_readiness() -> None:
    port, metrics_port = free_port(), free_port()
    base, api = f"http://127.0.0.1:{metrics_port}", f"http://127.0.0.1:{port}"
    with LocalPostgres() as pg:
        db = pg.create_database("registry_service")
        proc = subprocess.Popen(
            [sys.executable, "-m", "clmgit", "registry", "serve", "--port", str(port),
             "--metrics-port", str(metrics_port)],
            # The database URL from the environment, as deploy/overlays/registry gives it.
            env={**os.environ, "CLMGIT_REGISTRY_TOKEN": "secret-token-1234",
                 "CLMGIT_REGISTRY_DB": db},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            proc.stdout = proc.stderr  # read_until reads "stdout"
            read_until(proc, "serving the cluster registry", timeout=60)
            token = {"Authorization": "Bearer secret-token-1234"}
            assert requests.get(f"{api}/kubernetes-clusters", headers=token,
                                timeout=10).status_code == 200
            assert requests.get(f"{api}/kubernetes-clusters/nope", headers=token,
                                timeout=10).status_code == 404
            assert requests.get(f"{api}/kubernetes-clusters", timeout=10).status_code == 401
            assert requests.get(f"{api}/secret-token-1234", headers=token,
                                timeout=10).status_code == 404
            assert get(f"{base}/healthz") == (200, "ok\n")
            assert get(f"{base}/readyz") == (200, "ok\n")

            found = samples(base)
            requests_total = "clmgit_registry_requests_total"
            assert value(found, requests_total, route="/kubernetes-clusters", method="GET",
                         status="200") == 1
            assert value(found, requests_total, route="/kubernetes-clusters/{cluster_id}",
                         method="GET", status="404") == 1
            assert value(found, requests_total, route="/kubernetes-clusters", method="GET",
                         status="401") == 1
            # A path no route knows is `other`: what a client asks for never becomes a label.
            assert value(found, requests_total, route="other", method="GET",
                         status="404") == 1
            assert not any("secret" in v for (_, labels) in found for _, v in labels)
            assert value(found, "clmgit_registry_request_duration_seconds_bucket",
                         route="/kubernetes-clusters", le="+Inf") == 2

            pg.halt()
            why = _wait_for(f"{base}/readyz", 503)
            assert why.startswith("the database cannot be reached")
            assert get(f"{base}/healthz")[0] == 200
            pg.resume()
            _wait_for(f"{base}/readyz", 200)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
