"""The registry server's limits, in one place: what a request may be before any handler sees it.

A shared registry must not be broken by one request, so every bound is explicit: body size,
JSON nesting, string contents (no NUL, which PostgreSQL text cannot hold, and no lone UTF-16
surrogates, which cannot be encoded as UTF-8 and so could never be hashed by a client), integer
ranges (CLM's int32, and int64 where CLM has no format), the lease TTL, and the time a client
may take to send a request. docs/reference/registry-api.md lists them for operators.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clmgit.registry.server.problems import Problem, bad_request

#: Larger than any cluster record (a 5,000-cluster import posts records one by one).
MAX_BODY_BYTES = 1024 * 1024
#: A too-large body up to this size is read and dropped before the 413, so that its client
#: reads the answer; beyond it the connection is closed.
DRAIN_BYTES = 8 * MAX_BODY_BYTES
#: A cluster record nests 5 deep (record, node_pools, pool, config_items, value); 32 is plenty.
MAX_JSON_DEPTH = 32
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: A lease outlives a crashed holder by at most this; longer work renews it.
MAX_LEASE_TTL_SECONDS = 24 * 3600
#: Seconds a client has to send a request's headers, and then between parts of its body.
HEADER_TIMEOUT_SECONDS = 10.0
BODY_TIMEOUT_SECONDS = 10.0
#: Seconds an idle keep-alive connection stays open between requests.
IDLE_TIMEOUT_SECONDS = 5
#: Seconds a database statement may run (PostgreSQL), so a stuck query frees its connection.
STATEMENT_TIMEOUT_SECONDS = 30
#: Connections served at once; a request on one more is answered 503 (problem+json,
#: Retry-After) and its connection closed.
MAX_CONNECTIONS = 1000
#: Connections that have not yet sent a request with a valid token. When one more connects,
#: the oldest idle one of them is closed: anonymous clients cannot fill the server.
MAX_UNAUTHENTICATED_CONNECTIONS = 100
#: Seconds a client is told to wait (Retry-After) when the server is at a limit.
RETRY_AFTER_SECONDS = 1
#: Lists of clusters built at once (each holds every matching record in memory); more wait.
MAX_CONCURRENT_LISTS = 4
#: Seconds a list waits for its turn before it is answered 503 with Retry-After.
LIST_WAIT_SECONDS = 30.0
#: Longest request line plus headers (bytes); longer is 400.
MAX_HEADER_BYTES = 16 * 1024

_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")


def bad_text(text: str) -> str | None:
    """Why `text` cannot be stored, or None: NUL bytes and lone surrogates are refused."""
    found = _BAD_CHARS.search(text)
    if found is None:
        return None
    return "a NUL character" if found.group() == "\x00" else "a lone UTF-16 surrogate"


def parse_json(body: bytes) -> Any:
    """A request body as JSON within the limits above, else a 400 naming the first breach."""
    if len(body) > MAX_BODY_BYTES:
        raise too_large()
    if not body:
        raise bad_request("the request needs a JSON body")
    try:
        value = json.loads(body, parse_constant=_no_constant)
    except RecursionError:
        raise bad_request(f"the body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise bad_request(f"the body is not valid JSON: {e}") from None
    check_value(value)
    return value


def check_value(value: Any, where: str = "the body", depth: int = 1) -> None:
    """Depth, strings (keys too) and integers of a decoded JSON value; 400 on a breach."""
    if depth > MAX_JSON_DEPTH:
        raise bad_request(f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        _check_text(value, where)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise bad_request(f"{where} is outside the 64-bit integer range")
    elif isinstance(value, float):
        # json.loads turns 1e999 into inf; NaN and Infinity literals are not JSON either.
        if value != value or value in (float("inf"), float("-inf")):
            raise bad_request(f"{where} is not a finite number")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_value(item, f"{where}[{i}]", depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, f"a key in {where}")
            check_value(item, key if where == "the body" else f"{where}.{key}", depth + 1)


def _check_text(text: str, where: str) -> None:
    reason = bad_text(text)
    if reason is not None:
        raise bad_request(f"{where} contains {reason}")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def too_large() -> Problem:
    return Problem(413, "Content Too Large", f"bodies are limited to {MAX_BODY_BYTES} bytes")
