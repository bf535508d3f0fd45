"""The registry server's limits hold on SQLite and on PostgreSQL: no request smuggled in a
chunked body, slow clients cut off without stalling others, lease TTLs bounded (one request
must not break the fleet), and strings with NUL or lone surrogates, JSON nested too deep and
integers out of range refused with 400 — never stored, never a 500."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
import requests

from clmgit.registry.http import HttpRegistry
from clmgit.registry.server import limits
from clmgit.registry.server.httpd import RegistryServer
from tests.helpers.registry import TOKEN, MakeRegistry, records, start_server

C0 = "aws:123456789012:eu-central-1:c0"
C1 = "aws:123456789012:eu-central-1:c1"
PATH0 = "/kubernetes-clusters/" + quote(C0, safe="")
PATH1 = "/kubernetes-clusters/" + quote(C1, safe="")


@pytest.fixture(params=("sqlite", "postgresql"))
def url(request: pytest.FixtureRequest, make_registry: MakeRegistry,
        monkeypatch: pytest.MonkeyPatch) -> str:
    # Short timeouts, so that the slow-client tests take seconds.
    monkeypatch.setattr(limits, "HEADER_TIMEOUT_SECONDS", 1.0)
    monkeypatch.setattr(limits, "BODY_TIMEOUT_SECONDS", 1.0)
    return make_registry(str(request.param), records(2))


@pytest.fixture(scope="module")
def _shared_servers(
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, RegistryServer]]:
    """One server per backend for this module's checks that leave the server as they found it
    (reads, and writes it must refuse, each asserting that nothing changed): a server started
    per check had been most of the module's time. Both stay up for the whole module, so tests
    in random order do not restart them at each change of backend."""
    servers: dict[str, RegistryServer] = {}
    yield servers
    for server in servers.values():
        server.stop()


@pytest.fixture(params=("sqlite", "postgresql"))
def shared_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
               _shared_servers: dict[str, RegistryServer]) -> str:
    backend = str(request.param)
    if backend not in _shared_servers:
        _shared_servers[backend] = start_server(backend, records(2), request=request,
                                                folder=tmp_path_factory.mktemp("registry"))
    return _shared_servers[backend].url


@pytest.fixture
def http() -> Iterator[requests.Session]:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {TOKEN}"
    yield session
    session.close()


def connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def read_all(sock: socket.socket, *, within: float) -> bytes:
    """Everything the server sends until it closes the connection or `within` seconds pass."""
    sock.settimeout(within)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        pass
    except ConnectionResetError:
        pass
    return data


def head(method: str, path: str, *extra: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: registry", f"Authorization: Bearer {TOKEN}",
             *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def statuses(answer: bytes) -> list[int]:
    return [int(line.split()[1]) for line in answer.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]


def assert_healthy(url: str, http: requests.Session) -> None:
    """Reading one cluster, listing all and leasing still work, and clmgit's own client reads
    (and so can hash) every stored record."""
    assert http.get(url + PATH0).status_code == 200
    assert http.get(url + "/kubernetes-clusters").status_code == 200
    lease: dict[str, Any] = {"lease": {"holder": "probe", "ttl_seconds": 1}}
    assert http.patch(url + PATH1, json=lease).status_code == 200
    assert http.patch(url + PATH1, json={"lease": None},
                      headers={"Clmgit-Lease-Holder": "probe"}).status_code == 200
    assert [c.id for c in HttpRegistry(url, token=TOKEN).clusters()] == [C0, C1]


# --- request smuggling ------------------------------------------------------------------------


def test_a_request_hidden_in_a_chunked_body_is_not_executed(
    url: str, http: requests.Session
) -> None:
    hidden = head("DELETE", PATH1)
    chunk = b'{"channel": "x"}' + hidden
    raw = head("PATCH", PATH0, "Content-Type: application/json", "Transfer-Encoding: chunked")
    raw += f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n0\r\n\r\n"
    with connect(url) as sock:
        sock.sendall(raw)
        answer = read_all(sock, within=1.5)
    # The chunk is the body (not JSON), so one answer, 400, and the DELETE never ran.
    assert statuses(answer) == [400], answer
    assert http.get(url + PATH1).status_code == 200
    assert http.get(url + PATH0).json()["channel"] == "beta"


def test_content_length_beside_chunked_is_refused_and_nothing_runs(
    url: str, http: requests.Session
) -> None:
    hidden = head("DELETE", PATH1)
    body = b'{"channel": "x"}'
    raw = head("PATCH", PATH0, "Content-Type: application/json", f"Content-Length: {len(body)}",
               "Transfer-Encoding: chunked")
    raw += f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n" + hidden
    with connect(url) as sock:
        sock.sendall(raw)
        answer = read_all(sock, within=1.5)
    assert statuses(answer) == [400], answer
    assert http.get(url + PATH1).status_code == 200
    assert http.get(url + PATH0).json()["channel"] == "beta"


def test_a_chunked_body_is_read_as_the_body(url: str, http: requests.Session) -> None:
    body = b'{"channel": "gamma"}'
    raw = head("PATCH", PATH0, "Content-Type: application/json", "Transfer-Encoding: chunked",
               "Connection: close")
    raw += b"".join(f"{len(part):x}\r\n".encode() + part + b"\r\n"
                    for part in (body[:7], body[7:])) + b"0\r\n\r\n"
    with connect(url) as sock:
        sock.sendall(raw)
        assert statuses(read_all(sock, within=5)) == [200]
    assert http.get(url + PATH0).json()["channel"] == "gamma"


def test_an_oversized_chunked_body_is_413(url: str, http: requests.Session) -> None:
    chunk = b"x" * (256 * 1024)
    raw = head("PATCH", PATH0, "Content-Type: application/json", "Transfer-Encoding: chunked")
    with connect(url) as sock:
        sock.sendall(raw)
        try:
            for _ in range(8):
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        except OSError:
            pass  # the server may close the connection once it has answered
        assert statuses(read_all(sock, within=3))[:1] == [413]
    assert_healthy(url, http)


# --- slow clients ---------------------------------------------------------------------------


def test_slow_clients_are_cut_off_and_do_not_stall_others(
    url: str, http: requests.Session
) -> None:
    silent = [connect(url) for _ in range(20)]
    trickling = connect(url)
    slow_body = connect(url)
    slow_body.sendall(head("PATCH", PATH0, "Content-Type: application/json",
                           "Content-Length: 100") + b'{"chan')
    start = time.monotonic()
    # Others are served at once meanwhile.
    assert http.get(url + "/kubernetes-clusters").status_code == 200
    assert time.monotonic() - start < 1.0
    # A head sent one byte at a time is cut off at the deadline, though bytes keep coming.
    closed = False
    for byte in head("GET", "/kubernetes-clusters"):
        try:
            trickling.sendall(bytes([byte]))
        except OSError:
            closed = True
            break
        time.sleep(0.1)
        if time.monotonic() - start > 4:
            break
    assert closed or read_all(trickling, within=0.5) == b""
    # A body that stops arriving is answered 408.
    assert statuses(read_all(slow_body, within=4)) == [408]
    for sock in silent:  # never sent a byte: closed by the server
        assert read_all(sock, within=2) == b""
    for sock in (*silent, trickling, slow_body):
        sock.close()
    assert_healthy(url, http)


# --- leases ---------------------------------------------------------------------------------


@pytest.mark.parametrize("ttl", [1e12, 86_401, 2**63, -1, "60"])
def test_an_unbounded_lease_ttl_is_refused_and_breaks_nothing(
    shared_url: str, http: requests.Session, ttl: Any
) -> None:
    response = http.patch(shared_url + PATH0, json={"lease": {"holder": "a", "ttl_seconds": ttl}})
    assert response.status_code == 400, response.text
    assert http.get(shared_url + PATH0).json()["lease"] is None
    assert_healthy(shared_url, http)


def test_the_longest_lease_is_a_day(url: str, http: requests.Session) -> None:
    taken = http.patch(url + PATH0, json={"lease": {"holder": "a", "ttl_seconds": 86_400}})
    assert taken.status_code == 200 and taken.json()["lease"]["holder"] == "a"
    assert http.get(url + "/kubernetes-clusters").status_code == 200


def test_only_the_holder_releases_a_running_lease(url: str, http: requests.Session) -> None:
    http.patch(url + PATH0, json={"lease": {"holder": "a", "ttl_seconds": 60}})
    anonymous = http.patch(url + PATH0, json={"lease": None})
    assert anonymous.status_code == 409 and anonymous.json()["holder"] == "a"
    other = http.patch(url + PATH0, json={"lease": None}, headers={"Clmgit-Lease-Holder": "b"})
    assert other.status_code == 409
    assert http.get(url + PATH0).json()["lease"]["holder"] == "a"
    own = http.patch(url + PATH0, json={"lease": None}, headers={"Clmgit-Lease-Holder": "a"})
    assert own.status_code == 200 and own.json()["lease"] is None
    # An expired lease may be cleared by anyone.
    http.patch(url + PATH0, json={"lease": {"holder": "a", "ttl_seconds": 0}})
    assert http.patch(url + PATH0, json={"lease": None}).status_code == 200


# --- strings, depth, integers ---------------------------------------------------------------

BAD_BODIES = [
    ("PATCH", PATH0, b'{"channel": "a\\u0000b"}'),
    ("PATCH", PATH0, b'{"channel": "a\\ud800b"}'),
    ("PATCH", PATH0, b'{"channel": "\\udfff"}'),
    ("PATCH", PATH0, b'{"config_items": {"k\\u0000": "v"}}'),
    ("PATCH", PATH0, b'{"config_items": {"k": "\\ud83d"}}'),
    ("PATCH", PATH0, b'{"status": {"problems": [{"type": "t", "title": "\\u0000"}]}}'),
    ("PATCH", PATH0, b'{"lease": {"holder": "\\ud800", "ttl_seconds": 5}}'),
    ("PATCH", PATH0, b'{"channel": "\xed\xa0\x80"}'),  # a surrogate encoded as UTF-8
    ("PATCH", PATH0, b'{"channel": "\xff"}'),
    ("PUT", PATH0 + "/config-items/flag", b'{"value": "\\u0000"}'),
    ("PUT", PATH0 + "/config-items/flag", b'{"value": "\\udc00"}'),
    ("PATCH", PATH0, b'{"status": ' * 40 + b"{}" + b"}" * 40),
    ("PATCH", PATH0, b"[" * 100_000 + b"]" * 100_000),
    ("PATCH", PATH0, b'{"config_items": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"),
    ("PATCH", PATH0, b'{"criticality_level": 2147483648}'),
    ("PATCH", PATH0, b'{"criticality_level": -2147483649}'),
    ("PATCH", PATH0, b'{"criticality_level": 9223372036854775808}'),
    ("PATCH", PATH0, b'{"criticality_level": 1' + b"0" * 5000 + b"}"),
    ("PATCH", PATH0, b'{"criticality_level": 1e400}'),
    ("PATCH", PATH0, b'{"criticality_level": 2.5}'),
    ("PATCH", PATH0,
     b'{"status": {"problems": [{"type": "t", "title": "x", "status": 2147483648}]}}'),
    ("PUT", PATH0 + "/node-pools/big", json.dumps({
        "name": "big", "profile": "p", "instance_types": ["m5.large"],
        "discount_strategy": "none", "min_size": 0, "max_size": 2**31}).encode()),
    ("PATCH", PATH0 + "/node-pools/default-worker", b'{"max_size": 9223372036854775808}'),
]


@pytest.mark.parametrize(("method", "path", "body"), BAD_BODIES)
def test_bad_strings_depth_and_integers_are_400_and_not_stored(
    shared_url: str, http: requests.Session, method: str, path: str, body: bytes
) -> None:
    before = http.get(shared_url + PATH0).json()
    response = http.request(method, shared_url + path, data=body,
                            headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    assert http.get(shared_url + PATH0).json() == before
    assert_healthy(shared_url, http)


@pytest.mark.parametrize("query", [
    "channel=a%00b", "alias=%ED%A0%80", "region=%00", "criticality_level=2147483648",
    "criticality_level=99999999999999999999999", "lifecycle_status=%00", "verbose=maybe",
])
def test_bad_query_values_are_400(shared_url: str, http: requests.Session, query: str) -> None:
    response = http.get(f"{shared_url}/kubernetes-clusters?{query}")
    assert response.status_code == 400, response.text
    assert response.headers["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize("query", [
    "name=a%00b", "owner=%ED%A0%80", "criticality_level=2147483648", "lifecycle_status=gone",
])
def test_bad_account_queries_are_400(shared_url: str, http: requests.Session, query: str) -> None:
    assert http.get(f"{shared_url}/infrastructure-accounts?{query}").status_code == 400


@pytest.mark.parametrize("path", ["/kubernetes-clusters", "/infrastructure-accounts"])
@pytest.mark.parametrize("level", ["%0C9", "%209", "+9", "9%20", "9_0", "9.0", "0x9"])
def test_an_integer_query_is_digits_as_clm_reads_it(shared_url: str, http: requests.Session,
                                                     path: str, level: str) -> None:
    """Go's strconv.ParseInt refuses what pydantic would read as 9 or 90 (the fuzz test found
    `%0C9` accepted); a sign and leading zeros stay, as in Go."""
    assert http.get(f"{shared_url}{path}?criticality_level={level}").status_code == 400
    for good in ("9", "%2B9", "-1", "09"):
        assert http.get(f"{shared_url}{path}?criticality_level={good}").status_code == 200


@pytest.mark.parametrize("path", [
    "/kubernetes-clusters/a%00b", "/kubernetes-clusters/..", "/kubernetes-clusters/%ED%A0%80",
    PATH0 + "/config-items/a%00b", PATH0 + "/node-pools/a%00b",
])
def test_bad_path_values_are_refused(shared_url: str, http: requests.Session, path: str) -> None:
    # 405 where no GET or PUT exists on such a path at all (a cluster has no PUT).
    assert http.get(shared_url + path).status_code in (400, 404, 405)
    assert http.put(shared_url + path, json={"value": "v"}).status_code in (400, 404, 405)
    assert_healthy(shared_url, http)


def test_many_bad_requests_at_once_leave_the_server_serving(
    url: str, http: requests.Session
) -> None:
    def bad(i: int) -> int:
        method, path, body = BAD_BODIES[i % len(BAD_BODIES)]
        return http.request(method, url + path, data=body).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert set(pool.map(bad, range(2 * len(BAD_BODIES)))) == {400}
    assert_healthy(url, http)
