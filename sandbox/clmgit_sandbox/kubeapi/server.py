"""The HTTP side: a threading stdlib server on 127.0.0.1, bearer-token auth, bounded bodies.

`KubeAPIServer` is what tests and the demo use: start it (or use it as a context manager), write
a kubeconfig for it, point the official client at that kubeconfig. `seed()` puts objects in
directly, status included, the way kubelet and controllers would; `read()` and `objects()` look
at stored state without going through (or being counted by) the API.

The emulator as a whole:

No kube-apiserver can run on the machines clmgit is developed and tested on, so this package
serves the Kubernetes REST API itself, in memory, over HTTPS with a CA of its own (plain HTTP on
the same port too), for the official `kubernetes` client unmodified (typed APIs and
`DynamicClient`) and for the real `kubectl` (1.27 to 1.37 tested), through a kubeconfig that
carries the CA and a bearer token:

    with KubeAPIServer() as server:
        server.write_kubeconfig(path, context_names=["cluster-1", "alias-1"])
        api = kubernetes.config.new_client_from_config(str(path), context="cluster-1")

What it does as the real API server does (details in the module docstrings):
- discovery for the built-in kinds clmgit touches and for custom resources once their CRD exists;
- create, get, list (cluster-wide too, label and field selectors, limit/continue), update with
  resourceVersion conflicts, merge / JSON / strategic merge patch, server-side apply with
  managedFields (re-applying is a no-op, dropped fields go, conflicts are 409 unless forced),
  status subresources, `dryRun=All`;
- delete with preconditions, finalizers and propagation (Orphan, Background, Foreground) through
  owner references; namespaces delete their contents, CRDs their custom resources;
- the Eviction subresource judged by PodDisruptionBudgets (429 / 500);
- for kubectl: OpenAPI v2 (JSON and protobuf) and v3 documents from the Kubernetes schemas the
  `kubernetes-validate` package ships and from CRDs' openAPIV3Schema (`openapi.py`), strict field
  validation (`fieldValidation=Strict/Warn/Ignore`), watch with resourceVersions, bookmarks and
  watch lists (`watch.py`), server-side `Table` output with printer columns (`table.py`), the
  `scale` and `log` subresources and self-subject reviews (`subresources.py`), Events
  (`events.py`), protobuf request bodies (`protobuf.py`);
- `Status` bodies for errors (400, 401, 404, 405, 409, 413, 415, 422, 429, 500).

Decisions where an emulator must differ, because nothing runs here:
- No controllers and no kubelet in the emulator (the node simulator, `clmgit_sandbox.kubelet`,
  plays them beside it in the demo, `make sandbox` and the kubectl battery). A Deployment alone
  makes no pods; a new Pod is `Pending` and its
  `status` on create is ignored, as on a real server. Tests give pods a phase and a Ready
  condition through the status subresource (`patch_namespaced_pod_status`) or with
  `KubeAPIServer.seed()`, which writes objects as kubelet and controllers would, status included
  (see `fixtures.py`). PodDisruptionBudget status is computed on read, as the disruption
  controller would compute it.
- Deletion is immediate: `gracePeriodSeconds` is accepted and not waited for (nothing would
  confirm termination). Finalizers and the garbage collector run synchronously, inside the
  request: a Foreground or Orphan delete answers with the object marked (`deletionTimestamp`,
  finalizer), as the real server does, but by the time the client reads again the cascade is done.
- Not emulated: defaulting beyond a few fields (Pod phase, Namespace finalizers, CRD names and
  status), most validation (see `validation.py`; CRD schemas are used for unknown fields only),
  conversion between versions (all served versions share objects), admission webhooks, RBAC
  (one bearer token may do everything), aggregated discovery, protobuf or CBOR responses (JSON
  is always answered; clients accept it), exec/attach/port-forward, metrics (`kubectl top`).
"""

from __future__ import annotations

import contextlib
import copy
import hmac
import json
import logging
import os
import secrets
import socket
import ssl
from collections.abc import Callable, Sequence
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from clmgit.httpd import Background, Handler
from clmgit_sandbox.kubeapi import events, lifecycle, tls
from clmgit_sandbox.kubeapi.api import HEALTH_PATHS, KubeAPI
from clmgit_sandbox.kubeapi.cluster import Cluster, utc_timestamp
from clmgit_sandbox.kubeapi.errors import APIError, bad_request, entity_too_large, unauthorized
from clmgit_sandbox.kubeapi.kubeconfig import kubeconfig, write_kubeconfig
from clmgit_sandbox.kubeapi.messages import Request, Response
from clmgit_sandbox.kubeapi.resources import ResourceType
from clmgit_sandbox.kubeapi.stats import Stats

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
#: The API server's own limit on request bodies (3 MiB).
DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024
#: How much of an oversized body is read and discarded so the client gets its 413 cleanly.
_DRAIN_LIMIT = 16 * 1024 * 1024
#: How long a new connection may take to send its first byte and finish the TLS handshake.
_HANDSHAKE_TIMEOUT = 10.0


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, api_server: KubeAPIServer) -> None:
        self.api_server = api_server
        self.tls_context = tls.server_context(api_server.credentials)
        super().__init__((HOST, api_server.requested_port), _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        """On the connection's own thread: TLS if the client starts a handshake, else plain."""
        connection = request
        try:
            request.settimeout(_HANDSHAKE_TIMEOUT)
            first = request.recv(1, socket.MSG_PEEK)
            if first and first[0] == tls.TLS_HANDSHAKE:
                connection = self.tls_context.wrap_socket(request, server_side=True)
            connection.settimeout(None)
        except (OSError, ssl.SSLError) as e:
            log.debug("connection from %s dropped before its first request: %s", client_address, e)
            return
        try:
            super().finish_request(connection, client_address)
        finally:
            if connection is not request:
                with contextlib.suppress(OSError):
                    connection.close()


class _Handler(Handler):
    server: _HTTPServer

    def _serve(self) -> None:
        owner = self.server.api_server
        url = urlsplit(self.path)
        try:
            body = self._read_body(owner.max_body_bytes)
            if url.path not in HEALTH_PATHS:
                self._authenticate(owner.token)
            request = Request(
                method=self.command,
                path=url.path,
                query=dict(parse_qsl(url.query, keep_blank_values=True)),
                content_type=self.headers.get("Content-Type", ""),
                body=body,
                user_agent=self.headers.get("User-Agent", ""),
                accept=self.headers.get("Accept", ""),
            )
            response = owner.api.handle(request)
        except APIError as e:
            response = Response(e.code, e.body(), verb="error")
        except Exception as e:  # an emulator bug must still answer like a server would
            log.exception("internal error serving %s %s", self.command, self.path)
            error = APIError(500, "InternalError", f"Internal error occurred: {e}")
            response = Response(500, error.body(), verb="error")
        owner.stats.record(response)
        self._write(response)

    def _authenticate(self, token: str) -> None:
        given = self.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            raise unauthorized()

    def _read_body(self, limit: int) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked(limit)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError as e:
            self.close_connection = True
            raise bad_request("invalid Content-Length") from e
        if length > limit:
            self._discard(length)
            raise entity_too_large(limit)
        return self.rfile.read(length) if length > 0 else b""

    def _discard(self, length: int) -> None:
        """Drain an oversized body (bounded) so the client can read the answer."""
        if length > _DRAIN_LIMIT:
            self.close_connection = True
            return
        while length > 0:
            chunk = self.rfile.read(min(length, 65536))
            if not chunk:
                return
            length -= len(chunk)

    def _read_chunked(self, limit: int) -> bytes:
        data = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return bytes(data)
            if len(data) + size > limit:
                self.close_connection = True
                raise entity_too_large(limit)
            data += self.rfile.read(size)
            self.rfile.readline()

    def _write(self, response: Response) -> None:
        if response.stream is not None:
            self._write_stream(response)
            return
        if isinstance(response.body, bytes):
            payload, content_type = response.body, response.content_type
        elif isinstance(response.body, str):
            payload = response.body.encode()
            content_type = response.content_type or "text/plain; charset=utf-8"
        else:
            payload, content_type = json.dumps(response.body).encode(), "application/json"
        self.send_response(response.code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in response.headers.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)

    def _write_stream(self, response: Response) -> None:
        """A watch: chunked transfer encoding, each event flushed as it comes."""
        assert response.stream is not None
        self.send_response(response.code)
        self.send_header("Content-Type", response.content_type or "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            for chunk in response.stream:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:  # the client went away; the watch ends with it
            self.close_connection = True
        finally:
            close = getattr(response.stream, "close", None)
            if close is not None:
                close()


class KubeAPIServer:
    """A Kubernetes API emulator on 127.0.0.1, in-process; `port=0` picks a free port."""

    def __init__(
        self,
        *,
        port: int = 0,
        token: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        clock: Callable[[], str] = utc_timestamp,
    ):
        """`clock` returns the RFC 3339 timestamps the server writes (tests may fake time)."""
        self.requested_port = port
        self.token = token or secrets.token_urlsafe(24)
        self.max_body_bytes = max_body_bytes
        self.credentials = tls.generate(HOST)
        self.cluster = Cluster(clock)
        self.stats = Stats()
        self.api = KubeAPI(self.cluster)
        self._served: Background | None = None

    def start(self) -> KubeAPIServer:
        if self._served is None:
            self.cluster.store.closed = False
            self._served = Background(_HTTPServer(self), "kubeapi")
            self.api.server_address = f"{HOST}:{self.port}"
        return self

    def stop(self) -> None:
        if self._served is not None:
            self.cluster.store.close()  # open watches end
            self._served.stop()
            self._served = None

    def __enter__(self) -> KubeAPIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._served is None:
            raise RuntimeError("the emulator is not running; call start() first")
        return self._served.port

    @property
    def url(self) -> str:
        """HTTPS, with a certificate signed by `ca_pem`: what kubeconfigs point at."""
        return f"https://{HOST}:{self.port}"

    @property
    def http_url(self) -> str:
        """The same port in plain HTTP, for clients that reach it without the CA."""
        return f"http://{HOST}:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        return self.credentials.ca_pem

    def write_kubeconfig(
        self,
        path: str | os.PathLike[str],
        context_names: Sequence[str] = ("sandbox",),
        *,
        namespace: str = "default",
    ) -> Path:
        """Write a kubeconfig with one context per name, all reaching this server."""
        return write_kubeconfig(
            path,
            kubeconfig(
                self.url, self.token, list(context_names), namespace, ca_pem=self.ca_pem
            ),
        )

    def seed(self, *objects: dict[str, Any]) -> list[dict[str, Any]]:
        """Create or replace objects directly, status and timestamps as given (kubelet's view)."""
        with self.cluster.store.lock:
            return [self.api.writer.seed(copy.deepcopy(obj)) for obj in objects]

    def event(self, about: dict[str, Any], reason: str, message: str, *, component: str,
              kind: str = "Normal", host: str = "") -> None:
        """Record an Event about an object, as the component that would (see `events.py`)."""
        events.record(self.cluster, about, reason, message, component=component, kind=kind,
                      host=host)

    def remove(self, api_version: str, kind: str, name: str, namespace: str = "") -> bool:
        """Delete an object directly, as a controller would (garbage collection included);
        not counted in `stats`. False if it did not exist."""
        rtype = self._type(api_version, kind)
        with self.cluster.store.lock:
            live = self.cluster.store.get(rtype.key, namespace if rtype.namespaced else "", name)
            if live is None:
                return False
            lifecycle.delete(self.cluster, rtype, live, lifecycle.DeleteOptions())
            return True

    def read(
        self, api_version: str, kind: str, name: str, namespace: str = ""
    ) -> dict[str, Any] | None:
        """The stored object, or None; not an API call, not counted in `stats`."""
        rtype = self._type(api_version, kind)
        with self.cluster.store.lock:
            obj = self.cluster.store.get(rtype.key, namespace if rtype.namespaced else "", name)
            return self.cluster.present(rtype, obj) if obj is not None else None

    def objects(
        self, api_version: str, kind: str, namespace: str | None = None
    ) -> list[dict[str, Any]]:
        """Stored objects of a kind (in a namespace, or all); not counted in `stats`."""
        rtype = self._type(api_version, kind)
        with self.cluster.store.lock:
            objects = self.cluster.store.list_objects(rtype.key, namespace)
            return [self.cluster.present(rtype, obj) for obj in objects]

    def _type(self, api_version: str, kind: str) -> ResourceType:
        rtype = self.cluster.registry.by_kind(api_version, kind)
        if rtype is None:
            raise ValueError(f"the emulator serves no {kind} in {api_version}")
        return rtype
