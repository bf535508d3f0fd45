"""The registry server under many connections: at its connection limit it answers problem+json
503 with Retry-After (which clmgit's client honours); connections that never sent a valid token
are capped apart, so idle anonymous connections cannot lock authenticated clients out; and lists,
which hold every record in memory while they are built, are built a few at a time."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from clmgit.registry.server import limits
from clmgit.registry.server.api import RegistryAPI
from clmgit.registry.server.httpd import RegistryServer
from tests.helpers.registry import TOKEN, MakeRegistry, records


@pytest.fixture
def small_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RegistryServer]:
    monkeypatch.setattr(limits, "MAX_CONNECTIONS", 8)
    monkeypatch.setattr(limits, "MAX_UNAUTHENTICATED_CONNECTIONS", 3)
    with RegistryServer(f"sqlite:///{tmp_path / 'registry.db'}", tokens=[TOKEN]) as server:
        yield server


def connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def get(sock: socket.socket, *, token: str | None = TOKEN) -> bytes:
    """One keep-alive GET of the list on `sock`; the answer's head and body."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall(f"GET /kubernetes-clusters HTTP/1.1\r\nHost: r\r\n{auth}\r\n".encode())
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += sock.recv(65536)
    return data


def closed_by_server(sock: socket.socket, within: float = 2.0) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_at_the_connection_limit_a_request_gets_problem_json_503_with_retry_after(
        small_server: RegistryServer) -> None:
    url = small_server.url
    busy = []
    for _ in range(limits.MAX_CONNECTIONS):  # authenticated keep-alive connections, idle now
        busy.append(connect(url))
        assert get(busy[-1]).startswith(b"HTTP/1.1 200")

    answer = requests.get(url + "/kubernetes-clusters", timeout=10,
                          headers={"Authorization": f"Bearer {TOKEN}"})

    assert answer.status_code == 503
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.headers["Retry-After"] == str(limits.RETRY_AFTER_SECONDS)
    assert answer.json()["status"] == 503
    assert "connection" in answer.json()["detail"]
    for sock in busy:
        sock.close()
    time.sleep(0.1)  # the server hears the closes
    assert requests.get(url + "/kubernetes-clusters", timeout=10,
                        headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_idle_anonymous_connections_cannot_lock_out_authenticated_clients(
        small_server: RegistryServer) -> None:
    url = small_server.url
    anonymous = [connect(url) for _ in range(4 * limits.MAX_CONNECTIONS)]
    refused = connect(url)
    assert get(refused, token="wrong").startswith(b"HTTP/1.1 401")  # still anonymous

    answer = requests.get(url + "/kubernetes-clusters", timeout=10,
                          headers={"Authorization": f"Bearer {TOKEN}"})

    assert answer.status_code == 200
    # The oldest anonymous connections were closed to make room; the newest few are open.
    closed = [closed_by_server(sock, within=0.5) for sock in anonymous]
    assert closed[:-limits.MAX_UNAUTHENTICATED_CONNECTIONS] == [True] * (
        len(anonymous) - limits.MAX_UNAUTHENTICATED_CONNECTIONS)
    for sock in (*anonymous, refused):
        sock.close()


def test_lists_are_built_a_few_at_a_time(
        make_registry: MakeRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_CONCURRENT_LISTS", 1)
    monkeypatch.setattr(limits, "LIST_WAIT_SECONDS", 0.2)
    url = make_registry("postgresql", records(2))
    inside, release = threading.Event(), threading.Event()
    original = RegistryAPI.list_clusters

    def list_clusters(self, *args, **kwargs):
        if not inside.is_set():
            inside.set()
            assert release.wait(timeout=30)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(RegistryAPI, "list_clusters", list_clusters)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    first: list[int] = []
    building = threading.Thread(target=lambda: first.append(
        requests.get(url + "/kubernetes-clusters", headers=auth, timeout=30).status_code))
    building.start()
    assert inside.wait(timeout=30)

    second = requests.get(url + "/kubernetes-clusters", headers=auth, timeout=30)
    one = requests.get(url + "/kubernetes-clusters/" + records(1)[0]["id"], headers=auth,
                       timeout=30)
    release.set()
    building.join()

    assert second.status_code == 503
    assert second.headers["Retry-After"] == str(limits.RETRY_AFTER_SECONDS)
    assert second.headers["Content-Type"] == "application/problem+json"
    assert one.status_code == 200  # reading one cluster needs no list slot
    assert first == [200]
