"""The optional checks of the health gate against a real HTTP server on 127.0.0.1: an HTTP GET
that must answer 2xx, a Prometheus query that must be non-empty and true, and a timeout."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from clmgit_sandbox.doubles import FakeKube

from clmgit.engine.probes import run_check
from clmgit.healthstate import UNHEALTHY, UNKNOWN, Check, parse_gate
from clmgit.model import Cluster

ANSWERS = {
    "up == 1": {"status": "success", "data": {"resultType": "vector",
                                              "result": [{"value": [0, "1"]}]}},
    "absent": {"status": "success", "data": {"resultType": "vector", "result": []}},
    "errors > 0": {"status": "success", "data": {"resultType": "vector",
                                                 "result": [{"value": [0, "0"]}]}},
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/slow":
            time.sleep(1.5)
        if url.path == "/api/v1/query":
            body, code = json.dumps(ANSWERS[parse_qs(url.query)["query"][0]]).encode(), 200
        else:
            body, code = b"ok", 200 if url.path == "/healthz/c1" else 503
        try:
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except BrokenPipeError:
            pass  # the client gave up (the timeout case)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def base() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


CLUSTER = Cluster(id="aws:1:eu-central-1:c1", alias="c1")


def checked(raw: dict, base: str):
    gate = parse_gate({"checks": [json.loads(json.dumps(raw).replace("BASE", base))]}, "x")
    assert gate is not None
    return run_check(gate.checks[0], CLUSTER, FakeKube())


def test_http_must_answer_2xx_with_the_cluster_in_its_url(base: str) -> None:
    assert checked({"http": "BASE/healthz/{alias}"}, base) is None
    failed = checked({"http": "BASE/other"}, base)
    assert failed is not None and failed.state == UNHEALTHY and "answered 503" in failed.reason


def test_a_prometheus_query_must_be_non_empty_and_true(base: str) -> None:
    assert checked({"prometheus": {"url": "BASE", "query": "up == 1"}}, base) is None
    empty = checked({"prometheus": {"url": "BASE", "query": "absent"}}, base)
    assert empty is not None and empty.reason == "prometheus query 'absent' is empty"
    false = checked({"prometheus": {"url": "BASE", "query": "errors > 0"}}, base)
    assert false is not None and false.state == UNHEALTHY and false.reason.endswith("is false")


def test_a_check_past_its_timeout_is_unknown(base: str) -> None:
    late = checked({"http": "BASE/slow", "timeout": "1s"}, base)
    assert late is not None and late.state == UNKNOWN and "no answer within 1s" in late.reason


def test_a_check_must_name_exactly_one_kind() -> None:
    from clmgit.errors import ConfigError

    with pytest.raises(ConfigError, match="exactly one of http, prometheus, job"):
        parse_gate({"checks": [{"http": "https://x", "job": {"name": "a"}}]}, "alpha.yaml")
    with pytest.raises(ConfigError, match="timeout must be longer than 0s"):
        parse_gate({"checks": [{"http": "https://x", "timeout": 0}]}, "alpha.yaml")
    assert Check("job", namespace="ns", name="smoke").describe() == "job ns/smoke"
