"""`Registry.record_health` on every backend: the verdict alone is written, with no
lease and whoever holds one, the rest of the record as it is at that moment; the file keeps its
comments; the HTTP client writes on the condition that nothing changed since its read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests

from clmgit.model import ClusterStatus, Health, Problem, parse_cluster
from clmgit.registry import open_registry
from clmgit.registry.file import FileRegistry, clusters_yaml
from clmgit.registry.http import HttpRegistry
from clmgit.registry.server.httpd import RegistryServer
from tests.helpers.registry import BACKENDS, TOKEN, MakeRegistry, records

C0 = "aws:123456789012:eu-central-1:c0"
C1 = "aws:123456789012:eu-central-1:c1"
VERDICT = Health("unhealthy", "abc#h1", "2026-01-01T00:05:00Z", "",
                 ("Deployment platform/echo: pod platform/echo-1 container echo "
                  "CrashLoopBackOff (5 restarts)",))
STATUS = ClusterStatus(current_version="abc#h1", last_version="old#h0",
                       problems=(Problem("urn:x", "it broke", "details"),),
                       applied_at="2026-01-01T00:00:00Z")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_verdict_alone_is_written_without_taking_the_lease(
    make_registry: MakeRegistry, backend: str
) -> None:
    registry = open_registry(make_registry(backend, records(2)), default_dir=None)
    assert registry.acquire(C0, "reconciler", 60) is not None
    registry.record(C0, "reconciler", status=STATUS)
    registry.record_health(C0, VERDICT)
    status = {c.id: c.status for c in registry.clusters()}
    assert status[C0] == ClusterStatus(**{**STATUS.__dict__, "health": VERDICT})
    assert status[C1].health is None
    assert registry.acquire(C0, "other", 60) is None  # the reconciler still holds it
    registry.record(C0, "reconciler", release=True)  # and its lease works as before


def test_the_file_keeps_its_comments_and_other_records(tmp_path: Path) -> None:
    path = tmp_path / "clusters.yaml"
    raw: list[dict[str, Any]] = records(2)
    text = clusters_yaml(raw).replace("clusters:\n", "clusters:\n# the first cluster\n", 1)
    path.write_text(text)
    FileRegistry(path).record_health(C1, VERDICT)
    after = path.read_text()
    assert after.startswith(text.split(C1)[0])  # everything before the record, byte for byte
    assert "# the first cluster" in after and "CrashLoopBackOff (5 restarts)" in after
    assert FileRegistry(path).clusters()[1].status.health == VERDICT


class _Interleaved(HttpRegistry):
    """A client whose first write lands just after someone else changed the record."""

    def __init__(self, url: str, other: HttpRegistry) -> None:
        super().__init__(url, token=TOKEN)
        self.other, self.writes = other, 0

    def _call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        if method == "PATCH" and self.writes == 0:
            self.other.acquire(C0, "reconciler", 60)
            self.other.record(C0, "reconciler", status=STATUS, release=True)
        self.writes += method == "PATCH"
        return super()._call(method, path, **kwargs)


def test_a_record_changed_meanwhile_is_read_again_not_overwritten(
    server: RegistryServer, client: HttpRegistry
) -> None:
    for record in records(2):
        client.put_cluster(parse_cluster(record, "test"))
    racing = _Interleaved(server.url, client)
    racing.record_health(C0, VERDICT)
    assert racing.writes == 2  # the first was refused (412), the second wrote
    [status] = [c.status for c in client.clusters() if c.id == C0]
    assert status.problems == STATUS.problems and status.health == VERDICT


def test_the_server_refuses_a_verdict_in_an_unknown_state(
    server: RegistryServer, client: HttpRegistry, http: requests.Session
) -> None:
    client.put_cluster(parse_cluster(records(1)[0], "test"))
    bad = {"status": {"health": {"state": "great", "version": "a#b", "observed_at": "x"}}}
    answer = http.patch(f"{server.url}/kubernetes-clusters/{C0}", json=bad)
    assert answer.status_code == 400
