"""The HTTP side of the registry server: a threading stdlib server, bearer tokens, problem bodies.

The stdlib server is enough here: the API is small, requests are short, and the benchmark
(DESIGN.md §8, bench/registry.py) is met with it; no web framework is needed.
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
from collections.abc import Sequence
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

from clmgit.errors import RegistryError
from clmgit.httpd import Handler
from clmgit.registry.server.api import PUBLIC_PATHS, RegistryAPI, Request, Response
from clmgit.registry.server.db import Database, Unavailable, open_database
from clmgit.registry.server.problems import Problem, bad_request

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8099
#: Larger than any cluster record; bigger bodies are refused with 413.
MAX_BODY_BYTES = 1024 * 1024


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # Many reconcilers (and the concurrency tests) connect at once; the stdlib default of 5
    # queued connections would refuse some of them.
    request_queue_size = 512

    def __init__(self, owner: RegistryServer, host: str, port: int) -> None:
        self.owner = owner
        super().__init__((host, port), _Handler)


class _Handler(Handler):
    server: _HTTPServer

    def _serve(self) -> None:
        owner = self.server.owner
        url = urlsplit(self.path)
        try:
            body = self._read_body()
            if url.path not in PUBLIC_PATHS:
                self._authenticate(owner.tokens)
            request = Request(
                method=self.command,
                path=url.path,
                query=_query(url.query),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
            )
            segments = [unquote(s) for s in url.path.strip("/").split("/")]
            response = owner.api.handle(request, segments)
        except Problem as e:
            response = _problem(e)
        except Unavailable as e:
            log.warning("%s", e)
            response = _problem(Problem(503, "Service Unavailable", "the database is unavailable"))
            response.headers["Retry-After"] = "1"
        except Exception:  # a server bug must still answer like a server
            log.exception("internal error serving %s %s", self.command, url.path)
            response = _problem(Problem(500, "Internal Server Error", "see the server's log"))
        self._write(response)

    def _authenticate(self, tokens: Sequence[str]) -> None:
        given = self.headers.get("Authorization", "").encode()
        # Compare with every token, always, so the time taken says nothing about which matched.
        matched = [hmac.compare_digest(given, f"Bearer {t}".encode()) for t in tokens]
        if not any(matched):
            raise Problem(401, "Unauthorized", "a valid bearer token is required")

    def _read_body(self) -> bytes:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.close_connection = True
            raise bad_request("invalid Content-Length") from None
        if length > MAX_BODY_BYTES or length < 0:
            self.close_connection = True
            raise Problem(413, "Content Too Large", f"bodies are limited to {MAX_BODY_BYTES} bytes")
        return self.rfile.read(length) if length else b""

    def _write(self, response: Response) -> None:
        self.send_response(response.status)
        if response.status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="clmgit-registry"')
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(response.body)


def _query(text: str) -> dict[str, str]:
    try:
        return dict(parse_qsl(text, keep_blank_values=True, strict_parsing=False))
    except ValueError as e:
        raise bad_request(f"the query string is malformed: {e}") from None


def _problem(problem: Problem) -> Response:
    return Response(
        problem.status,
        json.dumps(problem.body()).encode(),
        content_type="application/problem+json",
    )


class RegistryServer:
    """The registry server in this process; `port=0` picks a free port. A context manager."""

    def __init__(
        self,
        db: str | Database,
        *,
        tokens: Sequence[str],
        host: str = DEFAULT_HOST,
        port: int = 0,
    ) -> None:
        if not tokens or not all(tokens):
            raise RegistryError(
                "the registry server needs a bearer token: set CLMGIT_REGISTRY_TOKEN "
                "(several may be given, comma-separated)"
            )
        self.tokens = tuple(tokens)
        self.db = open_database(db) if isinstance(db, str) else db
        self.api = RegistryAPI(self.db)
        self._host, self._requested_port = host, port
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def listen(self) -> RegistryServer:
        """Bind the port; requests queue until served."""
        try:
            self._httpd = _HTTPServer(self, self._host, self._requested_port)
        except OSError as e:
            raise RegistryError(
                f"cannot listen on {self._host}:{self._requested_port}: {e.strerror}"
            ) from None
        return self

    def start(self) -> RegistryServer:
        """Listen and serve on a background thread (tests, benchmarks, the demo)."""
        httpd = self.listen()._httpd
        assert httpd is not None
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (`clmgit registry serve`); after `listen()`."""
        assert self._httpd is not None, "call listen() first"
        try:
            self._httpd.serve_forever()
        finally:
            self.stop()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None
        self.db.close()

    def __enter__(self) -> RegistryServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the registry server is not running; call start() first")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"
