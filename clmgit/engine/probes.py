"""The optional checks of the health gate (`gates.healthy_in_source.checks`): an HTTP GET that
must answer 2xx, a Prometheus instant query that must be non-empty and true, a Kubernetes Job
that must have succeeded. Each has a timeout; each gives a `Finding` when it does not pass.

A check that cannot be asked (no answer, a timeout) makes the cluster `unknown`; a check that
answers no makes it `unhealthy`; a Job still running keeps it `pending`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import requests

from clmgit.engine.kube import Kind, KubeClient
from clmgit.engine.kubeobjects import Job
from clmgit.healthstate import PENDING, UNHEALTHY, UNKNOWN, Check
from clmgit.model import Cluster

JOBS = Kind("batch/v1", "Job", True, "jobs")


@dataclass(frozen=True)
class Finding:
    """One thing that keeps a cluster from being healthy: how bad, and one line why."""

    state: str  # pending, unhealthy or unknown
    reason: str


#: GET url with a timeout → (status code, decoded JSON body or None); raises OSError-like
#: `requests.RequestException` when nothing answers. Tests may pass their own.
Fetch = Callable[[str, dict[str, str], float], tuple[int, Any]]


def http_fetch(url: str, params: dict[str, str], timeout: float) -> tuple[int, Any]:
    response = requests.get(url, params=params, timeout=timeout)
    try:
        body = response.json()
    except ValueError:
        body = None
    return response.status_code, body


def run_check(check: Check, cluster: Cluster, kube: KubeClient, *,
              fetch: Fetch = http_fetch) -> Finding | None:
    try:
        if check.kind == "job":
            return _job(check, kube)
        if check.kind == "prometheus":
            return _prometheus(check, cluster, fetch)
        return _http(check, cluster, fetch)
    except requests.RequestException as e:
        return Finding(UNKNOWN, f"{check.describe()}: no answer within {check.timeout:g}s "
                                f"({type(e).__name__})")


def _http(check: Check, cluster: Cluster, fetch: Fetch) -> Finding | None:
    url = check.url_for(cluster)
    code, _ = fetch(url, {}, check.timeout)
    if 200 <= code < 300:
        return None
    return Finding(UNHEALTHY, f"http {url} answered {code}, not 2xx")


def _prometheus(check: Check, cluster: Cluster, fetch: Fetch) -> Finding | None:
    url = check.url_for(cluster).rstrip("/") + "/api/v1/query"
    code, body = fetch(url, {"query": check.query}, check.timeout)
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
