"""The registry server holds records to the rules clmgit's client reads them by (one mechanism:
`registry.records`): what CLM refuses is a 400 with CLM's reason, what would clash with another
record is a 409, and what the server accepts the client reads back as it was sent — on SQLite
and on PostgreSQL."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from clmgit_sandbox.configrepo import cluster_record

from clmgit.model import Problem
from clmgit.registry.http import HttpRegistry
from tests.helpers.registry import TOKEN, MakeRegistry, records

C0 = "aws:123456789012:eu-central-1:c0"
C1 = "aws:123456789012:eu-central-1:c1"
BACKENDS = ("sqlite", "postgresql")


def at(cid: str) -> str:
    return "/kubernetes-clusters/" + quote(cid, safe="")


def refused(response: requests.Response, status: int) -> str:
    assert response.status_code == status, response.text
    return str(response.json()["detail"])


@pytest.fixture
def session() -> requests.Session:
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {TOKEN}"
    return http


def record(local_id: str, **changes: Any) -> dict[str, Any]:
    return {**cluster_record(f"aws:123456789012:eu-central-1:{local_id}", channel="beta"),
            **changes}


@pytest.mark.parametrize("backend", BACKENDS)
def test_what_clm_refuses_is_400_with_clms_reason(
    make_registry: MakeRegistry, session: requests.Session, backend: str
) -> None:
    url = make_registry(backend, records(2))
    clusters = url + "/kubernetes-clusters"
    undotted = session.post(clusters, json=record("c2", api_server_url="https://localhost"))
    assert refused(undotted, 400) == (
        "the body: cluster aws:123456789012:eu-central-1:c2: can't derive hosted zone from URL "
        "'https://localhost' (field api_server_url needs a dotted host)")
    # CLM derives no hosted zone for an EKS cluster: any URL (or none) is accepted.
    eks = record("c3", provider="zalando-eks", api_server_url="")
    assert session.post(clusters, json=eks).status_code == 201
    # `creating` is refused as CLM's controller refuses it; clmgit keeps `requested` until created.
    creating = session.post(clusters, json=record("c4", lifecycle_status="creating"))
    assert "lifecycle_status" in refused(creating, 400)
    before = session.get(url + at(C0)).json()
    assert "hosted zone" in refused(session.patch(url + at(C0), json={"api_server_url": "x"}), 400)
    assert "lifecycle_status" in refused(
        session.patch(url + at(C0), json={"lifecycle_status": "creating"}), 400)
    assert session.get(url + at(C0)).json() == before
    # A cluster that breaks a rule through another route is refused too (the whole record is
    # checked on every write): here a patched pool keeps its instance types, as CLM needs.
    assert session.patch(url + at(C0) + "/node-pools/default-worker",
                         json={"instance_types": []}).status_code == 400
    assert HttpRegistry(url, token=TOKEN).clusters()  # what was accepted reads back


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_accepted_record_reads_back_as_sent(
    make_registry: MakeRegistry, session: requests.Session, backend: str
) -> None:
    url = make_registry(backend, records(1))
    problems: list[dict[str, Any]] = [{"type": "urn:x", "title": "t", "detail": "d", "status": 503,
                 "instance": "/clusters/c0/apply/7"},
                {"type": "urn:y", "title": "u"}]
    patched = session.patch(url + at(C0), json={
        "provider": "", "status": {"current_version": "a#b", "problems": problems}})
    assert patched.status_code == 200, patched.text
    stored = session.get(url + at(C0)).json()
    # An empty string field stays "" (no parse default such as zalando-aws is stored).
    assert stored["provider"] == ""
    assert stored["status"]["problems"] == [problems[0], {**problems[1], "detail": ""}]
    [cluster] = HttpRegistry(url, token=TOKEN).clusters()
    assert cluster.written_provider == ""
    assert cluster.status.problems == (
        Problem("urn:x", "t", "d", 503, "/clusters/c0/apply/7"), Problem("urn:y", "u"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_record_that_would_clash_is_409_and_the_registry_stays_readable(
    make_registry: MakeRegistry, session: requests.Session, backend: str
) -> None:
    url = make_registry(backend, records(2))
    clusters = url + "/kubernetes-clusters"
    same_alias = session.post(clusters, json=record("c2", alias="c0"))
    assert refused(same_alias, 409) == (
        "the registry: clusters aws:123456789012:eu-central-1:c0 and "
        "aws:123456789012:eu-central-1:c2 have the same alias (c0); each cluster needs its own")
    assert "same alias" in refused(session.patch(url + at(C1), json={"alias": "c0"}), 409)
    assert "same infrastructure_account and local_id" in refused(
        session.patch(url + at(C1), json={"local_id": "c0"}), 409)
    short = {**record("yy"), "id": "yy", "alias": "yy-a"}
    assert session.post(clusters, json=short).status_code == 201
    assert "the id of another cluster" in refused(
        session.patch(url + at(C1), json={"alias": "yy"}), 409)
    # Renaming to a free name, and changes to other fields, go through.
    assert session.patch(url + at(C1), json={"alias": "c1-new"}).status_code == 200
    assert session.patch(url + at(C1), json={"channel": "dev"}).status_code == 200
    names = [(c.id, c.alias) for c in HttpRegistry(url, token=TOKEN).clusters()]
    assert names == [(C0, "c0"), (C1, "c1-new"), ("yy", "yy-a")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_creates_with_one_alias_store_one(
    make_registry: MakeRegistry, backend: str
) -> None:
    """Writers race to create clusters that share an alias: one wins each round (on PostgreSQL
    the clash check and the write are serialised by an advisory lock)."""
    url = make_registry(backend, [])
    rounds, writers = 6, 12
    answers: dict[int, list[int]] = {r: [] for r in range(rounds)}
    start = threading.Barrier(writers)

    def create(n: int) -> None:
        with requests.Session() as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            for r in range(rounds):
                start.wait()
                body = record(f"r{r}-{n}", alias=f"shared-{r}")
                answers[r].append(
                    http.post(url + "/kubernetes-clusters", json=body).status_code)

    threads = [threading.Thread(target=create, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(sorted(a) == [201] + [409] * (writers - 1) for a in answers.values()), answers
    aliases = sorted(c.alias for c in HttpRegistry(url, token=TOKEN).clusters())
    assert aliases == [f"shared-{r}" for r in range(rounds)]


def test_a_record_stored_as_creating_before_still_reads_and_moves_on(
    make_registry: MakeRegistry, session: requests.Session, tmp_path: Path
) -> None:
    """Servers before this rule stored `creating`; such a record is not lost or stuck."""
    import json
    import sqlite3

    url = make_registry("sqlite", records(1))
    [db] = tmp_path.glob("registry-*.db")
    with sqlite3.connect(db) as conn:
        (doc,) = conn.execute("SELECT doc FROM clusters").fetchone()
        conn.execute("UPDATE clusters SET doc = ?, lifecycle_status = 'creating'",
                     [json.dumps({**json.loads(doc), "lifecycle_status": "creating"})])
    conn.close()
    assert session.get(url + at(C0)).json()["lifecycle_status"] == "creating"
    [cluster] = HttpRegistry(url, token=TOKEN).clusters()
    assert cluster.lifecycle_status == "creating"
    assert session.patch(url + at(C0), json={"channel": "dev"}).status_code == 200
    moved = session.patch(url + at(C0), json={"lifecycle_status": "requested"})
    assert moved.status_code == 200 and moved.json()["lifecycle_status"] == "requested"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_second_record_for_one_api_server_is_409(
    make_registry: MakeRegistry, session: requests.Session, backend: str
) -> None:
    url = make_registry(backend, records(2))
    clusters = url + "/kubernetes-clusters"
    before = session.get(clusters).json()
    # c2 copied from c0: id and alias changed, c0's URL written in another spelling.
    copied = session.post(clusters, json=record(
        "c2", api_server_url="HTTPS://C0.Example.ORG:443/"))
    assert refused(copied, 409) == (
        "the registry: clusters aws:123456789012:eu-central-1:c0 and "
        "aws:123456789012:eu-central-1:c2 have the same api_server_url "
        "(https://c0.example.org); each cluster needs its own")
    assert "same api_server_url" in refused(
        session.patch(url + at(C1), json={"api_server_url": "https://c0.example.org/"}), 409)
    assert session.get(clusters).json() == before
    # Another port is another server; a record keeps its own URL through a rewrite.
    assert session.patch(url + at(C1), json={
        "api_server_url": "https://c0.example.org:8443"}).status_code == 200
    assert session.patch(url + at(C0), json={
        "api_server_url": "https://C0.example.org/"}).status_code == 200
    assert len(HttpRegistry(url, token=TOKEN).clusters()) == 2
