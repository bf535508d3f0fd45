"""The HTTP registry client: URLs it accepts, the token it sends and never shows, retries with
backoff on 429/5xx, one clear sentence when the registry is unreachable or refuses, and an
answer about another cluster than the one asked about refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from http.server import ThreadingHTTPServer
from urllib.parse import quote

import pytest
import requests

from clmgit.errors import RegistryError
from clmgit.httpd import Background, Handler
from clmgit.model import ClusterStatus, Health, parse_cluster
from clmgit.registry import LeaseLost, open_registry
from clmgit.registry.http import HttpRegistry
from clmgit.registry.server.httpd import RegistryServer
from tests.helpers.fleet import Fleet
from tests.helpers.registry import TOKEN, MakeRegistry, records


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


class _Forwarding(Handler):
    """Forwards every request to the registry at `upstream`; subclasses change what comes back."""

    upstream = ""

    def _forward(self) -> tuple[bytes, requests.Response]:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        answer = requests.request(self.command, self.upstream + self.path, data=body,
                                  headers=headers, timeout=10)
        return body, answer

    def _answer(self, answer: requests.Response, content: bytes) -> None:
        self.send_response(answer.status_code)
        for name in ("Content-Type", "ETag"):
            if name in answer.headers:
                self.send_header(name, answer.headers[name])
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)


class _LosesOneAnswer(_Forwarding):
    """Drops the connection instead of answering the first release (`"lease": null`) after
    the registry has carried it out."""

    dropped: list[str] = []

    def _serve(self) -> None:
        body, answer = self._forward()
        if self.command == "PATCH" and b'"lease": null' in body and not self.dropped:
            self.dropped.append(self.path)
            self.close_connection = True
            return  # the write landed; its answer is lost
        self._answer(answer, answer.content)


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
    assert client.clusters()[0].status == done
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


# --- an answer about another cluster ------------------------------------------------------------

A, B = (r["id"] for r in records(2))


class _AnswersAboutAnother(_Forwarding):
    """Carries every request out, but answers those of one kind about cluster `A` with the
    record of cluster `B`: `get` (GET one), `claim` (a lease taken) or `record` (a status
    written)."""

    kind = ""
    other = ""
    rewritten: list[str] = []

    def _serve(self) -> None:
        body, answer = self._forward()
        if answer.ok and self._chosen(body):
            self.rewritten.append(f"{self.command} {self.path}")
            other = requests.get(f"{self.upstream}/kubernetes-clusters/{quote(self.other)}",
                                 headers={"Authorization": self.headers["Authorization"]},
                                 timeout=10)
            self._answer(answer, other.content)
            return
        self._answer(answer, answer.content)

    def _chosen(self, body: bytes) -> bool:
        if not self.path.startswith(f"/kubernetes-clusters/{quote(A, safe='')}"):
            return False
        data = json.loads(body) if body else {}
        return {"get": self.command == "GET",
                "claim": self.command == "PATCH" and bool(data.get("lease")),
                "record": self.command == "PATCH" and "status" in data}[self.kind]


@contextmanager
def answering_about_b(upstream: str, kind: str) -> Iterator[tuple[str, list[str]]]:
    rewritten: list[str] = []
    handler = type("AboutB", (_AnswersAboutAnother,), {
        "upstream": upstream, "kind": kind, "other": B, "rewritten": rewritten})
    with serving(handler) as url:
        yield url, rewritten


def _about_b(url: str) -> str:
    return (f"the registry at {url} answered about cluster {B} when asked about cluster {A}; "
            "refusing to act on it (check the server and any proxy)")


def test_an_answer_about_another_cluster_is_refused(client: HttpRegistry,
                                                    server: RegistryServer) -> None:
    for r in records(2):
        client.put_cluster(parse_cluster(r, "test"))
    for kind, call in [
        ("get", lambda reg: reg.record_health(A, Health("healthy", "v1", "2026-11-22T10:00:00Z"))),
        ("claim", lambda reg: reg.acquire(A, "me", 60)),
        ("record", lambda reg: reg.record(A, "me", status=ClusterStatus(next_version="v#1"))),
    ]:
        with answering_about_b(server.url, kind) as (url, rewritten):
            if kind == "record":
                assert client.acquire(A, "me", 60) is not None
            with pytest.raises(RegistryError) as caught:
                call(HttpRegistry(url, token=TOKEN))
            assert rewritten, kind  # the stand-in really answered about B
            assert str(caught.value) == _about_b(url)
            if kind != "get":
                client.record(A, "me", release=True)


@pytest.mark.parametrize("kind", ["claim", "record"])
def test_reconcile_acts_on_no_cluster_the_registry_was_not_asked_about(
    fleet: Fleet, make_registry: MakeRegistry, kind: str, monkeypatch: pytest.MonkeyPatch,
    moto_endpoint: str,
) -> None:
    """Through the CLI: reconcile of A, the registry answering about B. Nothing is recorded for
    either cluster, and no engine runs (it would fail reaching AWS — credentials that pass the
    up-front check, an endpoint where nothing listens — with a problem recorded). The account
    check asks moto's STS, so it passes whatever ran before in this process."""
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
                        ("AWS_ENDPOINT_URL_STS", moto_endpoint), ("CLMGIT_TOKEN", "t")):
        monkeypatch.setenv(name, value)
    chosen = [dict(r, id=cid, alias=cid.rsplit(":", 1)[1]) for r, cid in
              zip(records(2, channel="dev"), (A, B), strict=True)]
    upstream = make_registry("sqlite", chosen)
    real = HttpRegistry(upstream, token=TOKEN)
    before = {c.id: c.status for c in real.clusters()}
    with answering_about_b(upstream, kind) as (url, rewritten):
        result = fleet.cli("--registry", url, "reconcile", "--cluster", A)
    assert rewritten, (result.out, result.err)
    # One cluster's registry failure is that cluster's: it fails (exit 4), saying why.
    assert result.code == 4, (result.out, result.err)
    assert "refusing to act on it" in result.out and "failed" in result.out
    assert result.err.endswith(f"error: 1 cluster(s) failed: {A.rsplit(':', 1)[1]}\n"), result.err
    after = {c.id: c.status for c in real.clusters()}
    assert after[B] == before[B]
    # The write the client asked for is A's own (`record`: the version it starts on); no
    # engine ran, or its result (an applied version, or a problem) would be written too.
    expected = before[A] if kind == "claim" else replace(
        before[A], next_version=after[A].next_version)
    assert after[A] == expected
