"""Reading what a running clmgit serves: its metrics, parsed by prometheus-client's own text
parser, and the status of its health and readiness endpoints."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> tuple[int, str]:
    """(status, body) of a GET; an error status is an answer too."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def samples(base: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of `base`/metrics: (name, labels) -> value."""
    status, text = get(f"{base}/metrics")
    assert status == 200, text
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str,
          **labels: str) -> float:
    """The sample's value; a sample not served fails the test, naming it."""
    key = (name, frozenset(labels.items()))
    assert key in found, f"no sample {name}{labels} in /metrics"
    return found[key]
