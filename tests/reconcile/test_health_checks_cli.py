"""`clmgit health` through the real CLI on moto and the emulator, with the gate's HTTP checks
pointed at a local endpoint that redirects to a second server (standing for a metadata
service): the redirect is not followed, and a record field that is not a host label never
names a host."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytestmark = pytest.mark.slow  # moto and the emulator


class _Endpoint(BaseHTTPRequestHandler):
    asked: list[str] = []
    elsewhere = ""

    def do_GET(self) -> None:
        self.asked.append(self.path)
        if self.path.startswith("/away"):
            self.send_response(302)
            self.send_header("Location", f"{self.elsewhere}/latest/meta-data/")
        else:
            self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def servers() -> Iterator[tuple[str, str]]:
    started = []
    for _ in range(2):
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(server)
    _Endpoint.asked = []
    bases = [f"http://127.0.0.1:{s.server_address[1]}" for s in started]
    _Endpoint.elsewhere = bases[1]
    yield bases[0], bases[1]
    for s in started:
        s.shutdown()
        s.server_close()


def test_health_checks_go_where_the_channel_file_says_and_no_further(sandbox, servers) -> None:
    here, _ = servers
    assert sandbox.reconcile().code == 0  # a cluster that runs a version is looked at
    b = sandbox.builder
    gate = ("  healthy_in_source:\n    checks:\n"
            f"      - {{http: \"{here}/away/{{alias}}\", timeout: 5s}}\n"
            "      - {http: \"http://{id}.health.invalid/healthz\", timeout: 5s}\n")
    alpha = b.git("show", "main:channels/alpha.yaml") + "\n"
    b.commit("main", {"channels/alpha.yaml": alpha.replace(
        "  applied_in_source: true\n", "  applied_in_source: true\n" + gate)}, "Checks")

    looked = sandbox.cli("health", "--channel", "dev", "--kubeconfig", str(sandbox.kubeconfig),
                         "--no-record", "-o", "json")

    assert looked.code == 4, looked.err  # the cluster is not healthy: its checks fail
    [row] = json.loads(looked.out)["items"]
    reasons = " ".join(row["reasons"])
    assert "redirects to another origin" in reasons, reasons
    assert "is not a host name label" in reasons, reasons
    assert [p for p in _Endpoint.asked if "meta-data" in p] == []
    assert [p for p in _Endpoint.asked if p.startswith("/away/")] != []
