"""The HTTP registry: a client for CLM's Cluster Registry API (docs/reference/registry-api.md), as
`Registry`.

`--registry https://registry.example.org` (plain `http://` only for this machine, so the token is
never sent in clear text over a network). The bearer token comes from `CLMGIT_REGISTRY_TOKEN`
(the first one if several are listed); it is never logged, and `location` is the URL without
credentials. Query parameters of the URL are list filters (`...?environment=production`).

Requests time out; connection errors, 429 and 5xx are retried with exponential backoff by
urllib3's `Retry` (honouring `Retry-After`). Leases are the server's compare-and-set: a PATCH that
claims the lease succeeds for exactly one of many callers (the server locks the row and judges
expiry by its own clock), and writes carry `Clmgit-Lease-Holder` so that a holder whose lease
was taken over gets 409 and `LeaseLost` (see clmgit/registry/server/api.py). A release sent
again because its answer was lost finds its own lease gone; it counts as done if the record holds
what it wrote.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Self, cast
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from clmgit import events
from clmgit.errors import RegistryError
from clmgit.machine import collection_paused
from clmgit.model import (
    Cluster,
    ClusterStatus,
    Health,
    cluster_to_dict,
    parse_cluster,
    status_to_dict,
)
from clmgit.registry.base import LeaseLost, RegistryUnavailable, holder_is_dead
from clmgit.registry.records import check_record, check_registry
from clmgit.registry.server.problems import LEASE_HEADER, LEASE_HELD, LEASE_LOST

TOKEN_ENV = "CLMGIT_REGISTRY_TOKEN"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: Seconds to connect, seconds to wait for an answer.
TIMEOUT = (5.0, 60.0)


class _CountedRetry(Retry):
    """urllib3's `Retry` that tells `clmgit.events` of every retry (the metrics count them)."""

    def increment(self, method: str | None = None, url: str | None = None,
                  *args: Any, **kwargs: Any) -> Self:
        retry = super().increment(method, url, *args, **kwargs)  # raises when used up
        events.emit(events.RETRY, target="registry")
        return retry


def _check_url(url: str) -> tuple[str, dict[str, str]]:
    """The base URL without credentials or query, and the query as filters."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RegistryError(f"the registry URL {url!r} must be https://HOST[/PATH]")
    if parts.scheme == "http" and parts.hostname not in LOCAL_HOSTS:
        raise RegistryError(
            f"plain http:// is allowed only for localhost, not {parts.hostname}; use https:// "
            "so that the registry token is not sent in clear text"
        )
    netloc = parts.netloc.rsplit("@", 1)[-1]
    base = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
    return base, dict(parse_qsl(parts.query))


class HttpRegistry:
    """A Cluster Registry server reached over HTTP(S); safe to share between threads."""

    def __init__(self, url: str, *, token: str | None = None, attempts: int = 5,
                 backoff: float = 0.2) -> None:
        self.location, self._filters = _check_url(url)
        self._session = requests.Session()
        # Every method is retried: our writes are idempotent (a status or a lease renewed twice is
        # the same), and the server answers 5xx only when it wrote nothing.
        retry = _CountedRetry(
            total=attempts,
            backoff_factor=backoff,
            backoff_max=10.0,
            status_forcelist=(429, 500, 502, 503, 504),
            allowed_methods=frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"}),
            respect_retry_after_header=True,
            raise_on_status=False,
        )
        adapter = HTTPAdapter(max_retries=retry, pool_maxsize=32)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        self._session.trust_env = False  # no ~/.netrc credentials instead of the bearer token
        if token is None:  # the first of the tokens listed
            token = os.environ.get(TOKEN_ENV, "").split(",")[0].strip()
        self._session.headers["User-Agent"] = "clmgit"
        if token:
            self._session.headers["Authorization"] = f"Bearer {token}"

    # --- the Registry seam ---------------------------------------------------------------------

    def clusters(self, **filters: str) -> list[Cluster]:
        """Every record matching the URL's filters and `filters`, in registry order."""
        response = self._call("GET", "/kubernetes-clusters", params={**self._filters, **filters})
        with collection_paused():
            body = _json(response, self.location)
            items = body.get("items") if isinstance(body, dict) else None
            if not isinstance(items, list):
                raise RegistryError(
                    f"the registry at {self.location} answered without an item list")
            return check_registry(
                [parse_cluster(r, f"{self.location}: cluster #{i + 1}")
                 for i, r in enumerate(items)],
                self.location)

    def acquire(self, cluster_id: str, holder: str, ttl: float) -> Cluster | None:
        lease: dict[str, Any] = {"holder": holder, "ttl_seconds": ttl}
        response = self._claim(cluster_id, lease)
        current = _problem(response).get("holder") if response.status_code == 409 else None
        if isinstance(current, str) and holder_is_dead(current):
            # A killed run on this machine left its lease behind: take it from that holder
            # alone (if a third one took it meanwhile, the server refuses).
            response = self._claim(cluster_id, {**lease, "take_over": current})
        if response.status_code == 409:
            return None
        return self._parse(response, cluster_id)

    def _claim(self, cluster_id: str, lease: dict[str, Any]) -> requests.Response:
        response = self._call(
            "PATCH", _path(cluster_id), json={"lease": lease}, cluster_id=cluster_id, allow=(409,)
        )
        if response.status_code == 409 and _problem_type(response) != LEASE_HELD:
            raise self._refused(response)
        return response

    def record(
        self,
        cluster_id: str,
        holder: str,
        *,
        status: ClusterStatus | None = None,
        lifecycle_status: str | None = None,
        release: bool = False,
    ) -> None:
        body: dict[str, Any] = {}
        if status is not None:
            body["status"] = status_to_dict(status)
        if lifecycle_status is not None:
            body["lifecycle_status"] = lifecycle_status
        if release:
            body["lease"] = None
        response = self._call(
            "PATCH",
            _path(cluster_id),
            json=body,
            headers={LEASE_HEADER: holder},
            cluster_id=cluster_id,
            allow=(409,),
        )
        if response.status_code == 409:
            if _problem_type(response) != LEASE_LOST:
                raise self._refused(response)
            if not (release and _retried(response)
                    and self._released(cluster_id, holder, status, lifecycle_status)):
                raise LeaseLost(f"{_detail(response)}; stop working on {cluster_id}")
        elif response.content:
            self._about(_json(response, self.location), cluster_id)

    def record_health(self, cluster_id: str, health: Health, *, attempts: int = 5) -> None:
        """Read the record, write its status back with `health`, on the condition (If-Match)
        that nothing changed in between; read again when something did."""
        for _ in range(attempts):
            response = self._call("GET", _path(cluster_id), cluster_id=cluster_id)
            status = self._parse(response, cluster_id).status
            body = {"status": status_to_dict(replace(status, health=health))}
            headers = {"If-Match": response.headers.get("ETag", "*")}
            written = self._call("PATCH", _path(cluster_id), json=body, headers=headers,
                                 cluster_id=cluster_id, allow=(412,))
            if written.status_code != 412:
                return
        raise RegistryError(f"cluster {cluster_id} kept changing while its health verdict was "
                            f"written to {self.location}; run again")

    def _released(self, cluster_id: str, holder: str, status: ClusterStatus | None,
                  lifecycle_status: str | None) -> bool:
        """Whether a release that was sent again already landed: the first attempt wrote it and
        gave the lease up, but its answer was lost, so the retry found the lease free."""
        response = self._call("GET", _path(cluster_id), cluster_id=cluster_id)
        record = self._about(_json(response, self.location), cluster_id)
        lease = record.get("lease") or {}
        cluster = parse_cluster(record, self.location)
        return (lease.get("holder") != holder
                and (status is None or cluster.status == status)
                and (lifecycle_status is None or cluster.lifecycle_status == lifecycle_status))

    # --- more of the API: config items, import ------------------------------------------------

    def set_config_item(self, cluster_id: str, key: str, value: str) -> None:
        path = f"{_path(cluster_id)}/config-items/{quote(key, safe='')}"
        self._call("PUT", path, json={"value": value}, cluster_id=cluster_id)

    def delete_config_item(self, cluster_id: str, key: str) -> None:
        path = f"{_path(cluster_id)}/config-items/{quote(key, safe='')}"
        self._call("DELETE", path, cluster_id=cluster_id)

    def put_cluster(self, cluster: Cluster) -> bool:
        """Create a record or replace every field of it, status included; True if created."""
        body = cluster_to_dict(cluster)
        response = self._call("POST", "/kubernetes-clusters", json=body, allow=(409,))
        if response.status_code == 201:
            return True
        del body["id"]
        response = self._call("PATCH", _path(cluster.id), json=body, cluster_id=cluster.id)
        self._about(_json(response, self.location), cluster.id)
        return False

    # --- one request, its errors ---------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        cluster_id: str | None = None,
        allow: tuple[int, ...] = (),
        **kwargs: Any,
    ) -> requests.Response:
        """One request (retried by the adapter); an answer outside 2xx and `allow` raises."""
        try:
            response = self._session.request(
                method, self.location + path, timeout=TIMEOUT, **kwargs
            )
        except requests.RequestException as e:
            raise RegistryUnavailable(
                f"cannot reach the cluster registry at {self.location} "
                f"({_reason(e)}); check --registry and that the server is running"
            ) from None
        if response.ok or response.status_code in allow:
            return response
        if response.status_code == 401:
            raise RegistryError(
                f"the cluster registry at {self.location} refused the token; "
                f"set {TOKEN_ENV} to a token the server accepts"
            )
        if response.status_code == 404 and cluster_id is not None:
            raise RegistryError(f"{_detail(response)} (registry {self.location})")
        if response.status_code >= 500 or response.status_code == 429:
            raise RegistryUnavailable(
                f"the cluster registry at {self.location} failed with {response.status_code} "
                f"({_detail(response)}); try again later"
            )
        raise self._refused(response)

    def _refused(self, response: requests.Response) -> RegistryError:
        request = response.request
        return RegistryError(
            f"the cluster registry at {self.location} refused {request.method} "
            f"{urlsplit(request.url or '').path}: {_detail(response)}"
        )

    def _parse(self, response: requests.Response, cluster_id: str) -> Cluster:
        record = self._about(_json(response, self.location), cluster_id)
        cluster = parse_cluster(record, self.location)
        check_record(cluster, self.location)
        return cluster

    def _about(self, record: Any, cluster_id: str) -> dict[str, Any]:
        """`record` if it is the record of `cluster_id`. A server (or a proxy) that answers a
        request about one cluster with another's record would have that record written and
        the engine run in the other cluster's account: the answer is refused."""
        named = record.get("id") if isinstance(record, dict) else None
        if named != cluster_id:
            about = f"cluster {named}" if isinstance(named, str) and named else "no cluster"
            raise RegistryError(
                f"the registry at {self.location} answered about {about} when asked about "
                f"cluster {cluster_id}; refusing to act on it (check the server and any proxy)")
        return cast(dict[str, Any], record)


def _retried(response: requests.Response) -> bool:
    """Whether the request was sent more than once (an earlier attempt may have landed)."""
    retries = getattr(response.raw, "retries", None)
    return bool(retries is not None and retries.history)


def _path(cluster_id: str) -> str:
    return f"/kubernetes-clusters/{quote(cluster_id, safe='')}"


def _json(response: requests.Response, location: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise RegistryError(f"the registry at {location} answered with invalid JSON") from None


def _problem(response: requests.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _problem_type(response: requests.Response) -> str:
    return str(_problem(response).get("type", ""))


def _detail(response: requests.Response) -> str:
    problem = _problem(response)
    return str(problem.get("detail") or problem.get("title") or f"HTTP {response.status_code}")


def _reason(error: requests.RequestException) -> str:
    if isinstance(error, requests.Timeout):
        return "timed out"
    if isinstance(error, requests.ConnectionError):
        return "connection failed"
    return type(error).__name__
