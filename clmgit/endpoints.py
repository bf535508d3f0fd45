"""The endpoints a long-running process serves for Kubernetes and Prometheus: `/healthz`
(liveness), `/readyz` (readiness) and `/metrics` (the text format, written by
`prometheus-client`), on a port of their own, from a WSGI app on a background thread.

What "live" and "ready" mean is the caller's: each is a function returning None (200) or why
not (503, the reason as the body).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterable
from http.server import ThreadingHTTPServer
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from clmgit.errors import ClmgitError
from clmgit.httpd import Background

log = logging.getLogger(__name__)

#: None: fine; a sentence: why not.
Check = Callable[[], str | None]

StartResponse = Callable[..., Any]


def endpoints_app(*, live: Check, ready: Check, registry: CollectorRegistry) -> Any:
    """The WSGI app: the two checks and the metrics of `registry`."""
    metrics = make_wsgi_app(registry)

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/metrics":
            return metrics(environ, start_response)  # type: ignore[no-any-return]
        check = {"/healthz": live, "/readyz": ready}.get(path)
        if check is None:
            return _answer(start_response, "404 Not Found", "not found: use /healthz, "
                           "/readyz or /metrics")
        try:
            why = check()
        except Exception as e:  # noqa: BLE001 - a check that breaks says "not ok", with why
            why = f"the check failed: {type(e).__name__}: {e}"
        if why is None:
            return _answer(start_response, "200 OK", "ok")
        return _answer(start_response, "503 Service Unavailable", why)

    return app


def _answer(start_response: StartResponse, status: str, text: str) -> list[bytes]:
    body = (text + "\n").encode()
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"),
                            ("Content-Length", str(len(body)))])
    return [body]


class _Server(ThreadingHTTPServer, WSGIServer):
    """wsgiref's server, a thread per request (a slow scrape does not hold up a probe)."""

    allow_reuse_address = True


class _Server6(_Server):
    address_family = socket.AF_INET6


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


def serve_endpoints(app: Any, *, address: str, port: int) -> Background:
    """`app` served on `address:port` (port 0: a free one) on a thread, until `stop()`."""
    server_class = _Server6 if ":" in address else _Server
    try:
        httpd = make_server(address, port, app, server_class=server_class,
                            handler_class=_Quiet)
    except OSError as e:
        raise ClmgitError(f"cannot serve the metrics and health endpoints on {address}:{port}: "
                          f"{e.strerror}; choose another --metrics-port") from None
    return Background(httpd, "endpoints")
