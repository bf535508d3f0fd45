"""The registry server process: the FastAPI app of `app` served by uvicorn.

uvicorn (with h11, a strict HTTP/1.1 parser) reads requests, so chunked bodies, pipelining and
malformed framing are handled by maintained code, not ours. What uvicorn leaves open is bounded
here: a client that connects and then sends its headers slowly (or never) is cut off after
`limits.HEADER_TIMEOUT_SECONDS` (uvicorn only times out idle keep-alive connections), and the
number of connections is capped: past `limits.MAX_CONNECTIONS` a request is answered with a
problem+json 503 and `Retry-After`, and connections that have not yet sent a valid token are
capped apart (`limits.MAX_UNAUTHENTICATED_CONNECTIONS`, the oldest idle one closed for a new
one), so that anonymous connections cannot lock authenticated clients out. Handlers run on a
thread pool, since the databases are reached through blocking drivers.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import socket
import threading
from collections.abc import Sequence
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from clmgit.errors import RegistryError
from clmgit.registry.server import limits
from clmgit.registry.server.api import RegistryAPI
from clmgit.registry.server.app import bearer_matches, create_app, problem_response
from clmgit.registry.server.db import Database, open_database
from clmgit.registry.server.problems import Problem

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"


class _TimedH11(H11Protocol):
    """h11 with a deadline for each request's head: from connecting, or from the end of the
    previous answer, a client has HEADER_TIMEOUT_SECONDS to send a whole request line and
    headers, however it trickles them."""

    _deadline: asyncio.TimerHandle | None = None
    #: The tokens the server accepts (set on the server's own subclass).
    credentials: tuple[bytes, ...] = ()
    _order = itertools.count()
    authenticated = False

    # uvicorn's H11Protocol narrows asyncio's BaseTransport to Transport (ignoring the same
    # error itself); its subclass takes what it takes.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.opened = next(self._order)
        self._make_room()
        # Connections closed just now are still in the set until the loop hears it.
        open_ = sum(1 for c in self.connections if not c.transport.is_closing())
        if open_ > limits.MAX_CONNECTIONS:
            self.app = _at_limit  # this connection's requests: 503, then it is closed
        self._arm()

    def _make_room(self) -> None:
        """Close the oldest idle connection that never sent a valid token, if there are as
        many such connections as allowed (this one is among them until its first request)."""
        anonymous = [c for c in self.connections
                     if isinstance(c, _TimedH11) and not c.authenticated and c is not self
                     and not c.transport.is_closing()]
        if len(anonymous) < limits.MAX_UNAUTHENTICATED_CONNECTIONS:
            return
        idle = [c for c in anonymous if c.cycle is None or c.cycle.response_complete]
        if idle:
            min(idle, key=lambda c: c.opened).transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm()  # the head arrived; the body has its own timeout (app.Guard)
            if not self.authenticated:
                given = dict(self.cycle.scope["headers"]).get(b"authorization", b"")
                self.authenticated = bearer_matches(given, self.credentials)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(limits.HEADER_TIMEOUT_SECONDS, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        waiting = self.cycle is None or self.cycle.response_complete
        if waiting and not self.transport.is_closing():
            self.transport.close()


async def _at_limit(scope: Any, receive: Any, send: Any) -> None:
    problem = Problem(503, "Service Unavailable",
                      f"the server is at its limit of {limits.MAX_CONNECTIONS} connections; "
                      "try again shortly")
    headers = {"Retry-After": str(limits.RETRY_AFTER_SECONDS), "Connection": "close"}
    accept = dict(scope["headers"]).get(b"accept", b"").decode("latin-1")
    await problem_response(problem, headers, accept=accept)(scope, receive, send)


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
        self.app = create_app(self.api, tokens=self.tokens)
        self._host, self._requested_port = host, port
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def listen(self) -> RegistryServer:
        """Bind the port; connections queue until served."""
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY only on sockets that say so,
        # and without it every answer (head and body written apart) waits ~40 ms for the
        # client's delayed ACK.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self._host, self._requested_port))
        except OSError as e:
            sock.close()
            raise RegistryError(
                f"cannot listen on {self._host}:{self._requested_port}: {e.strerror}"
            ) from None
        # Many reconcilers (and the concurrency tests) connect at once.
        sock.listen(1024)
        self._socket = sock
        config = uvicorn.Config(
            self.app,
            http=type("_ServerH11", (_TimedH11,), {
                "credentials": tuple(t.encode() for t in self.tokens)}),
            lifespan="off",
            log_level="warning",
            access_log=False,
            server_header=False,
            timeout_keep_alive=limits.IDLE_TIMEOUT_SECONDS,
            limit_concurrency=None,  # counted by _TimedH11, answered as problem+json
            h11_max_incomplete_event_size=limits.MAX_HEADER_BYTES,
            timeout_graceful_shutdown=5,
        )
        self._server = uvicorn.Server(config)
        return self

    def start(self) -> RegistryServer:
        """Listen and serve on a background thread (tests, benchmarks, the demo)."""
        server = self.listen()._server
        assert server is not None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        while not server.started:
            if not self._thread.is_alive():
                raise RegistryError("the registry server stopped while starting; see its log")
            self._thread.join(timeout=0.01)
        return self

    def _run(self) -> None:
        assert self._server is not None and self._socket is not None
        self._server.run(sockets=[self._socket])

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (`clmgit registry serve`); after `listen()`."""
        assert self._server is not None, "call listen() first"
        try:
            self._run()
        finally:
            self.stop()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None
        self.db.close()

    def __enter__(self) -> RegistryServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._socket is None:
            raise RuntimeError("the registry server is not running; call start() first")
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}" if ":" not in host else f"http://[{host}]:{port}"
