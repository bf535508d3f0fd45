"""The HTTP registry client: URLs it accepts, the token it sends and never shows, retries with
backoff on 429/5xx, and one clear sentence when the registry is unreachable or refuses."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer

import pytest
import requests
from registry_fixtures import TOKEN, records

from clmgit.errors import RegistryError
from clmgit.httpd import Background, Handler
from clmgit.model import ClusterStatus, parse_cluster
from clmgit.registry import LeaseLost, open_registry
from clmgit.registry.http import HttpRegistry
from clmgit.registry.server.httpd import RegistryServer


@pytest.mark.parametrize("url", ["http://registry.example.org", "http://10.0.0.1:8099/api"])
def test_plain_http_is_refused_beyond_this_machine(url: str) -> None:
    with pytest.raises(RegistryError, match="plain http:// is allowed only for localhost"):
        open_registry(url, default_dir=None)


def test_https_and_local_http_are_accepted_and_credentials_never_shown() -> None:
    remote = HttpRegistry("https://user:secret@registry.example.org/api/?channel=beta", token="t")
    assert remote.location == "https://registry.example.org/api"
    for local in ("http://localhost:1", "http://127.0.0.1:1", "http://[::1]:1"):
        assert open_registry(local, default_dir=None).location == local


def test_clusters_are_filtered_by_the_urls_query(server: RegistryServer) -> None:
    client = HttpRegistry(server.url, token=TOKEN)
    for i, r in enumerate(records(3)):
        r["environment"] = "production" if i == 1 else "test"
        client.put_cluster(parse_cluster(r, "test"))
    only = HttpRegistry(f"{server.url}/?environment=production", token=TOKEN)
    assert [c.id for c in only.clusters()] == ["aws:123456789012:eu-central-1:c1"]
    assert len(client.clusters(environment="test")) == 2


def test_the_token_comes_from_the_environment_and_a_wrong_one_is_named_not_shown(
    server: RegistryServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLMGIT_REGISTRY_TOKEN", f"{TOKEN},other")
    assert HttpRegistry(server.url).clusters() == []
    monkeypatch.setenv("CLMGIT_REGISTRY_TOKEN", "wrong-secret")
    with pytest.raises(RegistryError) as caught:
        HttpRegistry(server.url).clusters()
    assert "refused the token; set CLMGIT_REGISTRY_TOKEN" in str(caught.value)
    assert "wrong-secret" not in str(caught.value)


def test_an_unreachable_registry_is_one_sentence() -> None:
    with RegistryServer("sqlite:///:memory:", tokens=["t"]) as s:
        url = s.url  # a port that was free and is closed again below
    with pytest.raises(RegistryError) as caught:
        HttpRegistry(url, token="t", attempts=1, backoff=0).clusters()
    assert str(caught.value) == (
        f"cannot reach the cluster registry at {url} (connection failed); "
        "check --registry and that the server is running"
    )


class _Flaky(Handler):
    """Answers 503, then 429 with Retry-After, then the real list."""

    answers: list[int] = []

    def _serve(self) -> None:
        status = self.answers.pop(0) if self.answers else 200
        body = b'{"items": []}' if status == 200 else b"{}"
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serving(handler: type[Handler]) -> Iterator[str]:
    """`handler` served on a free local port; yields its URL."""
    background = Background(ThreadingHTTPServer(("127.0.0.1", 0), handler), handler.__name__)
    try:
        yield f"http://127.0.0.1:{background.port}"
    finally:
        background.stop()


@pytest.fixture
def flaky() -> Iterator[tuple[str, list[int]]]:
    answers: list[int] = []
    with serving(type("Flaky", (_Flaky,), {"answers": answers})) as url:
        yield url, answers


def test_5xx_and_429_are_retried_with_backoff(flaky: tuple[str, list[int]]) -> None:
    url, answers = flaky
    answers += [503, 429, 502]
    assert HttpRegistry(url, token="t", backoff=0.01).clusters() == []
    assert answers == []  # all three failures were consumed by retries


def test_a_registry_failing_after_every_retry_says_so(flaky: tuple[str, list[int]]) -> None:
    url, answers = flaky
    answers += [503] * 3
    with pytest.raises(RegistryError, match="failed with 503 .*try again later"):
        HttpRegistry(url, token="t", attempts=2, backoff=0.01).clusters()


class _LosesOneAnswer(Handler):
    """Forwards every request to the registry, but drops the connection instead of answering
    the first release (`"lease": null`) after the registry has carried it out."""

    upstream = ""
    dropped: list[str] = []

    def _serve(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        answer = requests.request(self.command, self.upstream + self.path, data=body,
                                  headers=headers, timeout=10)
        if self.command == "PATCH" and b'"lease": null' in body and not self.dropped:
            self.dropped.append(self.path)
            self.close_connection = True
            return  # the write landed; its answer is lost
        self.send_response(answer.status_code)
        for name in ("Content-Type", "ETag"):
            if name in answer.headers:
                self.send_header(name, answer.headers[name])
        self.send_header("Content-Length", str(len(answer.content)))
        self.end_headers()
        self.wfile.write(answer.content)


@pytest.fixture
def lossy(server: RegistryServer) -> Iterator[tuple[str, list[str]]]:
    dropped: list[str] = []
    handler = type("Lossy", (_LosesOneAnswer,), {"upstream": server.url, "dropped": dropped})
    with serving(handler) as url:
        yield url, dropped


def test_a_release_whose_answer_was_lost_is_not_reported_as_a_lost_lease(
    client: HttpRegistry, lossy: tuple[str, list[str]]
) -> None:
    record = records(1)[0]
    client.put_cluster(parse_cluster(record, "test"))
    url, dropped = lossy
    through = HttpRegistry(url, token=TOKEN, backoff=0.01)
    assert through.acquire(record["id"], "me", 60) is not None
    done = ClusterStatus(current_version="v2", last_version="v1", applied_at="2026-11-22T10:00:00Z")
    through.record(record["id"], "me", status=done, release=True)  # sent twice, landed once
    assert dropped  # the first answer really was lost
    assert client.cluster(record["id"]).status == done
    assert client.acquire(record["id"], "other", 60) is not None  # and the lease is free


def test_a_lease_taken_over_meanwhile_is_still_lost(
    client: HttpRegistry, lossy: tuple[str, list[str]]
) -> None:
    record = records(1)[0]
    client.put_cluster(parse_cluster(record, "test"))
    url, _ = lossy
    through = HttpRegistry(url, token=TOKEN, backoff=0.01)
    assert through.acquire(record["id"], "me", 60) is not None
    client.record(record["id"], "me", release=True)  # behind its back
    assert client.acquire(record["id"], "other", 60) is not None
    with pytest.raises(LeaseLost):
        through.record(record["id"], "me", status=ClusterStatus(current_version="v2"),
                       release=True)
