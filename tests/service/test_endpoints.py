"""The endpoints server (`clmgit.endpoints`): its answers, and a port that is taken refused
in one sentence before any work."""

from __future__ import annotations

import socket
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter

from clmgit.endpoints import endpoints_app, serve_endpoints
from tests.helpers.fleet import Fleet
from tests.helpers.scrape import get


def test_the_endpoints_answer_their_checks_and_nothing_else() -> None:
    registry = CollectorRegistry()
    Counter("clmgit_example", "An example.", registry=registry).inc()

    def broken() -> str | None:
        raise RuntimeError("no database driver")

    app = endpoints_app(live=lambda: None, ready=broken, registry=registry)
    served = serve_endpoints(app, address="127.0.0.1", port=0)
    try:
        base = f"http://127.0.0.1:{served.port}"
        assert get(f"{base}/healthz") == (200, "ok\n")
        assert get(f"{base}/readyz") == (
            503, "the check failed: RuntimeError: no database driver\n")
        assert "clmgit_example_total 1.0" in get(f"{base}/metrics")[1]
        assert get(f"{base}/secrets") == (404, "not found: use /healthz, /readyz or /metrics\n")
    finally:
        served.stop()


def test_a_taken_metrics_port_is_refused_before_any_round(fleet: Fleet, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = fleet.cli("controller", "--metrics-port", str(port))
    assert result.code == 1
    assert result.err == (f"error: cannot serve the metrics and health endpoints on "
                          f"127.0.0.1:{port}: Address already in use; choose another "
                          "--metrics-port\n")
    assert result.out == ""
