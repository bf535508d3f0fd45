"""The optional checks of the health gate (`gates.healthy_in_source.checks`): an HTTP GET that
must answer 2xx, a Prometheus instant query that must be non-empty and true, a Kubernetes Job
that must have succeeded. Each has a timeout; each gives a `Finding` when it does not pass.

A check that cannot be asked (no answer, a timeout) makes the cluster `unknown`; a check that
answers no makes it `unhealthy`; a Job still running keeps it `pending`.

An HTTP check goes where the channel file names and no further (docs/explanation/
untrusted-input.md): the record's fields in its URL are host labels or encoded path segments
(`Check.url_for`), its host must be one `health_checks.hosts` of `clmgit.yaml` allows (when
set), a redirect is followed only within the same origin (or never), the timeout bounds the
whole exchange, and a body over `MAX_BODY` is no answer. A check refused so is `unhealthy`.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlencode, urljoin, urlsplit

from clmgit.engine.kube import Kind, KubeClient
from clmgit.engine.kubeobjects import Job
from clmgit.errors import ConfigError
from clmgit.healthstate import PENDING, UNHEALTHY, UNKNOWN, Check, HealthPolicy
from clmgit.model import Cluster

JOBS = Kind("batch/v1", "Job", True, "jobs")
#: The most a check's answer may hold; a longer body is no answer.
MAX_BODY = 1024 * 1024
#: The most redirects (within the origin) one check follows.
MAX_REDIRECTS = 5
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
#: The policy without `health_checks:` in clmgit.yaml.
ANYWHERE = HealthPolicy()


@dataclass(frozen=True)
class Finding:
    """One thing that keeps a cluster from being healthy: how bad, and one line why."""

    state: str  # pending, unhealthy or unknown
    reason: str


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    location: str | None = None


class NoAnswer(Exception):
    """Nothing usable came back: no connection, the deadline passed (`late`), a body over
    `MAX_BODY`."""

    def __init__(self, message: str = "", *, late: bool = False) -> None:
        super().__init__(message)
        self.late = late


class _Refused(Exception):
    """The check would go where the channel file and `health_checks:` do not let it."""


#: One GET of `url`, all of it (connect, headers, body) within `timeout` seconds, no redirect
#: followed, a body of at most `MAX_BODY`; raises NoAnswer. Tests may pass their own.
Fetch = Callable[[str, float], Reply]


def http_fetch(url: str, timeout: float) -> Reply:
    """`Fetch` over http.client. The deadline is kept by a timer that shuts the socket down
    when it passes: a server that answers a byte at a time cannot hold a check longer."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(host, parts.port, timeout=timeout,
                                           context=ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(host, parts.port, timeout=timeout)
    late, sockets = threading.Event(), list[socket.socket]()
    timer = threading.Timer(timeout, _cut, (sockets, late))
    timer.daemon = True
    timer.start()
    try:
        conn.connect()
        # Kept here: http.client lets go of a socket the response will close, and reads on.
        sockets.append(conn.sock)
        if late.is_set():
            raise NoAnswer(late=True)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("GET", target, headers={"Accept": "application/json, */*",
                                             "User-Agent": "clmgit-health"})
        response = conn.getresponse()
        body = response.read(MAX_BODY + 1)
        reply = Reply(response.status, body, response.getheader("Location"))
    except (OSError, http.client.HTTPException, ValueError) as e:
        if late.is_set() or isinstance(e, TimeoutError):
            raise NoAnswer(late=True) from None
        raise NoAnswer(f"no answer ({type(e).__name__})") from None
    finally:
        timer.cancel()
        conn.close()
    if late.is_set():
        raise NoAnswer(late=True)
    if len(reply.body) > MAX_BODY:
        raise NoAnswer(f"the answer is larger than {MAX_BODY:,} bytes")
    return reply


def _cut(sockets: list[socket.socket], late: threading.Event) -> None:
    late.set()
    for sock in sockets:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed


def run_check(check: Check, cluster: Cluster, kube: KubeClient, *,
              fetch: Fetch = http_fetch, policy: HealthPolicy = ANYWHERE) -> Finding | None:
    try:
        if check.kind == "job":
            return _job(check, kube)
        if check.kind == "prometheus":
            return _prometheus(check, cluster, fetch, policy)
        return _http(check, cluster, fetch, policy)
    except (_Refused, ConfigError) as e:
        return Finding(UNHEALTHY, f"{check.describe()}: refused: {e}")
    except NoAnswer as e:
        why = f"no answer within {check.timeout:g}s" if e.late else str(e)
        return Finding(UNKNOWN, f"{check.describe()}: {why}")


def get(url: str, timeout: float, *, fetch: Fetch, policy: HealthPolicy) -> Reply:
    """GET `url` as a check may: to a host `policy` allows, following redirects only within
    the origin (scheme, host, port) and only if `policy` lets it, all within `timeout`."""
    deadline = time.monotonic() + timeout
    for _ in range(MAX_REDIRECTS + 1):
        host = urlsplit(url).hostname or ""
        if not policy.allows(host):
            raise _Refused(f"{host} is not among the hosts of health_checks.hosts in "
                           "clmgit.yaml")
        left = deadline - time.monotonic()
        if left <= 0:
            raise NoAnswer(late=True)
        reply = fetch(url, left)
        if reply.status not in _REDIRECT_CODES or not reply.location:
            return reply
        target = urljoin(url, reply.location)
        if policy.redirects == "none":
            raise _Refused(f"{url} redirects to {target}, and health_checks.redirects is none")
        if _origin(target) != _origin(url):
            raise _Refused(f"{url} redirects to another origin ({_origin(target)}), which a "
                           "check never follows")
        url = target
    raise _Refused(f"more than {MAX_REDIRECTS} redirects")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{parts.port or default}"


def _http(check: Check, cluster: Cluster, fetch: Fetch, policy: HealthPolicy) -> Finding | None:
    url = check.url_for(cluster)
    code = get(url, check.timeout, fetch=fetch, policy=policy).status
    if 200 <= code < 300:
        return None
    return Finding(UNHEALTHY, f"http {url} answered {code}, not 2xx")


def _prometheus(check: Check, cluster: Cluster, fetch: Fetch,
                policy: HealthPolicy) -> Finding | None:
    url = check.url_for(cluster).rstrip("/") + "/api/v1/query?" + urlencode(
        {"query": check.query})
    reply = get(url, check.timeout, fetch=fetch, policy=policy)
    code, body = reply.status, _json(reply.body)
    what = f"prometheus query {check.query!r}"
    if code != 200 or not isinstance(body, dict) or body.get("status") != "success":
        return Finding(UNKNOWN, f"{what}: the server answered {code} without a result")
    data = body.get("data") or {}
    result = data.get("result")
    if data.get("resultType") == "scalar":
        values = [result]
    elif isinstance(result, list):
        values = [r.get("value") for r in result if isinstance(r, dict)]
    else:
        values = []
    if not values:
        return Finding(UNHEALTHY, f"{what} is empty")
    if not all(_true(v) for v in values):
        return Finding(UNHEALTHY, f"{what} is false")
    return None


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _true(sample: Any) -> bool:
    """A sample `[time, "value"]` is true when its value is a number other than 0."""
    try:
        return float(sample[1]) != 0.0
    except (TypeError, ValueError, IndexError):
        return False


def _job(check: Check, kube: KubeClient) -> Finding | None:
    job = cast(Job | None, kube.get(JOBS, check.name, check.namespace))
    where = f"Job {check.namespace}/{check.name}"
    if job is None:
        return Finding(UNHEALTHY, f"{where} does not exist")
    status = job.get("status") or {}
    for condition in status.get("conditions") or ():
        if condition.get("status") != "True":
            continue
        if condition.get("type") == "Complete":
            return None
        if condition.get("type") == "Failed":
            why = condition.get("message") or condition.get("reason") or "failed"
            return Finding(UNHEALTHY, f"{where} failed: {why}")
    if int(status.get("succeeded") or 0) > 0:
        return None
    return Finding(PENDING, f"{where} has not finished")
