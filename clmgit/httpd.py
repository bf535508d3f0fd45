"""What clmgit's in-process HTTP servers share — the registry server, and in the sandbox the
Kubernetes API emulator and the GitHub API stand-in: a request handler that routes every method
to one `_serve` and logs at debug level only, and serving on a background thread."""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

log = logging.getLogger(__name__)


class Handler(BaseHTTPRequestHandler):
    """Subclasses implement `_serve`, whatever the method."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle's algorithm on, the client's
    # delayed ACK would cost ~40 ms per request.
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _serve(self) -> None:
        raise NotImplementedError

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


class Background:
    """`httpd` served on a daemon thread until `stop()`."""

    def __init__(self, httpd: ThreadingHTTPServer, name: str) -> None:
        self.httpd = httpd
        httpd.daemon_threads = True
        self._thread = threading.Thread(target=httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, name=name, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)
