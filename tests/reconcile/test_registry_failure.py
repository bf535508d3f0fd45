"""A registry that fails for one cluster fails that cluster, not the run: the others are
reconciled, the failed one is reported with the registry's reason, and the run exits 4."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import pytest
import requests

from clmgit.errors import RegistryError
from clmgit.model import desired_version
from clmgit.registry.file import FileRegistry

pytestmark = pytest.mark.slow  # end to end: real processes, moto and the emulator

REASON = "cannot write the registry clusters.yaml: No space left on device"


def fail_for(monkeypatch, method: str, cluster_id: str, *, only_release: bool = False) -> None:
    """`FileRegistry.<method>` raises for `cluster_id` only (with `only_release`: only the
    write that records the outcome), as a full disk or an HTTP 5xx would; every other call
    goes through."""
    original = getattr(FileRegistry, method)

    def failing(self, cid, *args, **kwargs):
        if cid == cluster_id and (kwargs.get("release") or not only_release):
            raise RegistryError(REASON)
        return original(self, cid, *args, **kwargs)

    monkeypatch.setattr(FileRegistry, method, failing)


@pytest.mark.parametrize("method", ["acquire", "record"])
def test_a_registry_failure_for_one_cluster_fails_only_that_cluster(sandbox_factory, monkeypatch,
                                                                    method):
    sandbox = sandbox_factory(2)
    good, bad = sandbox.records
    fail_for(monkeypatch, method, bad["id"])

    result = sandbox.reconcile("--output", "json")

    assert result.code == 4, result.out + result.err
    assert "Traceback" not in result.err
    assert f"1 cluster(s) failed: {bad['alias']}" in result.err
    outcomes = {c["alias"]: c for c in json.loads(result.out)["items"]}
    assert outcomes[good["alias"]]["outcome"] == "applied"
    assert outcomes[bad["alias"]]["outcome"] == "failed"
    assert REASON in outcomes[bad["alias"]]["detail"]
    applied = sandbox.clusters()[good["alias"]]
    assert applied.status.current_version == desired_version(sandbox.versions[0], applied)


def test_the_table_names_the_registry_failure(sandbox_factory, monkeypatch):
    sandbox = sandbox_factory(2)
    _, bad = sandbox.records
    fail_for(monkeypatch, "acquire", bad["id"])

    result = sandbox.reconcile()

    assert result.code == 4, result.out + result.err
    [row] = [line for line in result.out.splitlines() if line.startswith(bad["alias"])]
    assert "failed" in row and f"cannot take its lease: {REASON}" in row
    assert "1 applied" in result.out and "1 failed" in result.out


def test_a_cluster_applied_whose_outcome_the_registry_refuses_is_failed_saying_so(
        sandbox_factory, monkeypatch):
    sandbox = sandbox_factory(2)
    good, bad = sandbox.records
    fail_for(monkeypatch, "record", bad["id"], only_release=True)

    result = sandbox.reconcile("--output", "json")

    assert result.code == 4, result.out + result.err
    outcomes = {c["alias"]: c for c in json.loads(result.out)["items"]}
    assert outcomes[good["alias"]]["outcome"] == "applied"
    assert outcomes[bad["alias"]]["outcome"] == "failed"
    assert outcomes[bad["alias"]]["detail"] == (
        f"applied, but the registry did not record it: {REASON}")
    # The next run finds next_version written and applies again: nothing is lost.
    assert sandbox.clusters()[bad["alias"]].status.next_version


@contextmanager
def failing_proxy(upstream: str, cluster_id: str) -> Iterator[str]:
    """An HTTP proxy on 127.0.0.1 in front of a registry server: every PATCH of `cluster_id`
    is answered 503 (as an overloaded server would), everything else is passed through."""
    broken = f"/kubernetes-clusters/{quote(cluster_id, safe='')}"

    class Handler(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.command == "PATCH" and self.path.split("?")[0] == broken:
                status, content = 503, json.dumps({"title": "Service Unavailable",
                                                   "detail": "the database is overloaded"})
            else:
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                answer = requests.request(self.command, upstream + self.path, data=body,
                                          headers=headers, timeout=30)
                status, content = answer.status_code, answer.text
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content.encode())))
            self.end_headers()
            self.wfile.write(content.encode())

        do_GET = do_PATCH = do_PUT = do_POST = do_DELETE = _forward

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_registry_server_failing_for_one_cluster_fails_only_that_cluster(sandbox_factory):
    sandbox = sandbox_factory(2, "sqlite")
    good, bad = sandbox.records
    with failing_proxy(sandbox.registry_spec, bad["id"]) as proxy:
        sandbox.registry_spec = proxy
        result = sandbox.reconcile("--output", "json")

    assert result.code == 4, result.out + result.err
    outcomes = {c["alias"]: c for c in json.loads(result.out)["items"]}
    assert outcomes[good["alias"]]["outcome"] == "applied"
    assert outcomes[bad["alias"]]["outcome"] == "failed"
    assert "failed with 503 (the database is overloaded)" in outcomes[bad["alias"]]["detail"]
