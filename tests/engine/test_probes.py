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
from clmgit.healthstate import UNHEALTHY, UNKNOWN, Check, HealthPolicy, parse_gate
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


# --- a check goes where the channel file names, and no further --------------------------------


class _Hostile(BaseHTTPRequestHandler):
    """A health endpoint that tries to steer the check: redirects, drips, floods."""

    elsewhere = ""  # the base URL of the other server (the "metadata service")

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/away":
            self._send(302, b"", location=f"{self.elsewhere}/latest/meta-data/")
        elif path == "/here":
            self._send(302, b"", location="/healthz/c1")
        elif path == "/healthz/c1":
            self._send(200, b"ok")
        elif path == "/drip-body":
            self._send(200, b"", length=40)
            self._drip(40)
        elif path == "/drip-headers":
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            self._drip(40, b"X: y\r\n")
        elif path == "/big":
            self._send(200, b"x" * (2 * 1024 * 1024))
        else:
            self._send(404, b"")

    def _send(self, code: int, body: bytes, *, location: str = "", length: int = -1) -> None:
        self.send_response(code)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Length", str(len(body) if length < 0 else length))
        self.end_headers()
        self.wfile.write(body)

    def _drip(self, count: int, piece: bytes = b"x") -> None:
        try:
            for _ in range(count):  # a piece every 0.1 s: each read is quick, the whole is not
                self.wfile.write(piece)
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass  # the client gave up

    def log_message(self, *args: object) -> None:
        pass


class _Metadata(BaseHTTPRequestHandler):
    asked: list[str] = []

    def do_GET(self) -> None:
        self.asked.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


def _serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def hostile() -> Iterator[tuple[str, str]]:
    """(the endpoint's base URL, the other server's base URL); the other records each ask."""
    other, other_base = _serve(_Metadata)
    _Metadata.asked = []
    _Hostile.elsewhere = other_base
    server, base = _serve(_Hostile)
    yield base, other_base
    for s in (server, other):
        s.shutdown()
        s.server_close()


def probe(url: str, *, cluster: Cluster = CLUSTER, policy: HealthPolicy | None = None,
          timeout: str = "5s"):
    gate = parse_gate({"checks": [{"http": url, "timeout": timeout}]}, "x")
    assert gate is not None
    return run_check(gate.checks[0], cluster, FakeKube(), policy=policy or HealthPolicy())


def test_a_redirect_to_another_origin_is_not_followed(hostile) -> None:
    base, _ = hostile

    found = probe(f"{base}/away")

    assert found is not None and found.state == UNHEALTHY
    assert "redirects to another origin" in found.reason
    assert _Metadata.asked == []


def test_a_redirect_within_the_origin_is_followed_unless_none_are(hostile) -> None:
    base, _ = hostile

    assert probe(f"{base}/here") is None
    refused = probe(f"{base}/here", policy=HealthPolicy(redirects="none"))
    assert refused is not None and refused.state == UNHEALTHY
    assert "health_checks.redirects is none" in refused.reason


def test_a_record_field_cannot_move_the_check_to_another_host(hostile) -> None:
    _, other = hostile
    port = other.rsplit(":", 1)[1]
    cluster = Cluster(id="aws:1:eu-central-1:c1", alias=f"x@127.0.0.1:{port}/via-alias#")

    found = probe("http://{alias}.health.invalid/healthz", cluster=cluster)

    assert found is not None and found.state == UNHEALTHY
    assert "is not a host name label" in found.reason
    assert _Metadata.asked == []


def test_record_fields_in_the_path_are_encoded(hostile) -> None:
    _, other = hostile
    cluster = Cluster(id="aws:1:eu-central-1:c1", alias="../../admin?x=1#")

    assert probe(other + "/health/{alias}/{id}", cluster=cluster) is None
    assert _Metadata.asked == ["/health/..%2F..%2Fadmin%3Fx%3D1%23/aws%3A1%3Aeu-central-1%3Ac1"]


@pytest.mark.parametrize("path", ["/drip-body", "/drip-headers"])
def test_the_timeout_bounds_the_whole_request(hostile, path: str) -> None:
    base, _ = hostile
    started = time.monotonic()

    found = probe(f"{base}{path}", timeout="1s")

    assert time.monotonic() - started < 2.5  # the drip takes 4 s
    assert found is not None and found.state == UNKNOWN
    assert found.reason.endswith("no answer within 1s")


def test_a_body_over_the_cap_is_no_answer(hostile) -> None:
    base, _ = hostile

    found = probe(f"{base}/big")

    assert found is not None and found.state == UNKNOWN
    assert "larger than 1,048,576 bytes" in found.reason


def test_the_allow_list_of_hosts(hostile) -> None:
    base, _ = hostile

    refused = probe(f"{base}/healthz/c1", policy=HealthPolicy(hosts=("*.example.org",)))
    assert refused is not None and refused.state == UNHEALTHY
    assert "127.0.0.1 is not among the hosts of health_checks.hosts" in refused.reason
    assert probe(f"{base}/healthz/c1", policy=HealthPolicy(hosts=("127.0.0.*",))) is None


def test_the_policy_is_read_from_clmgit_yaml() -> None:
    from clmgit.errors import ConfigError
    from clmgit.layout import parse_settings

    layout = parse_settings(b"health_checks: {hosts: ['*.example.org'], redirects: none}\n")
    assert layout.health == HealthPolicy(("*.example.org",), "none")
    with pytest.raises(ConfigError, match="health_checks.redirects must be same-origin or none"):
        parse_settings(b"health_checks: {redirects: any}\n")
