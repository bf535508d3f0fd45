"""`clmgit report --serve`: the page on 127.0.0.1, made anew from the repository and the registry
on every load. Read-only: GET and HEAD of `/` only (any other method: 405, with the same
security headers as the page), and no write action exists in the page."""

from __future__ import annotations

from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import cast
from urllib.parse import urlsplit

from clmgit.errors import ClmgitError
from clmgit.httpd import Handler
from clmgit.report.html import CSP

HOST = "127.0.0.1"


class ReportServer(ThreadingHTTPServer):
    def __init__(self, page: Callable[[], str], port: int) -> None:
        self.page = page
        super().__init__((HOST, port), _PageHandler)


def report_server(page: Callable[[], str], *, port: int) -> ReportServer:
    """A server (not yet serving) of `page()` on 127.0.0.1:`port` (0: any free port)."""
    try:
        return ReportServer(page, port)
    except OSError as e:
        raise ClmgitError(f"cannot listen on {HOST}:{port}: {e.strerror or e}; "
                          "choose another --port") from None


class _PageHandler(Handler):
    def do_HEAD(self) -> None:
        self._serve()

    def __getattr__(self, name: str) -> Callable[[], None]:
        # Every method has an answer (405 unless GET or HEAD), not http.server's 501 page.
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """http.server's own refusals (a malformed request, a line too long), in the form and
        with the headers of every other answer."""
        self.close_connection = True
        self._send(code, f"{message or self.responses.get(code, ('error',))[0]}\n",
                   "text/plain", {"Connection": "close"})

    def _serve(self) -> None:
        if self.command not in ("GET", "HEAD"):
            self.close_connection = True  # its body, if any, is never read
            self._send(405, "the report is read-only\n", "text/plain",
                       {"Allow": "GET, HEAD", "Connection": "close"})
            return
        if not self._local_host():
            # A page of another site that resolves its name to 127.0.0.1 (DNS rebinding) gets
            # nothing.
            self._send(403, "unexpected Host header\n", "text/plain")
            return
        if urlsplit(self.path).path not in ("/", "/index.html"):
            self._send(404, "not found: the report is at /\n", "text/plain")
            return
        try:
            page = cast(ReportServer, self.server).page()
        except ClmgitError as e:
            self._send(500, f"error: {e}\n", "text/plain")
            return
        except Exception as e:  # noqa: BLE001 - the page says so; the server keeps serving
            self._send(500, f"internal error: {type(e).__name__}: {e}\n", "text/plain")
            return
        self._send(200, page, "text/html")

    def _local_host(self) -> bool:
        host = (self.headers.get("Host") or "").rpartition(":")[0] or self.headers.get("Host")
        return host in (HOST, "localhost")

    def _send(self, code: int, text: str, kind: str, extra: dict[str, str] | None = None) -> None:
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
