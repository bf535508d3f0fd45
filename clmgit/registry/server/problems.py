"""Error answers of the registry server as RFC 9457 problem details (application/problem+json).

Handlers raise `Problem`; the HTTP layer turns it into a response. Every refusal of bad input is
a `Problem` with a 4xx status, so bad input can never surface as a 500.
"""

from __future__ import annotations

from typing import Any

#: Problem types of clmgit's own (the generic HTTP ones use "about:blank"); the client reads them.
LEASE_HELD = "urn:clmgit:problem:lease-held"
LEASE_LOST = "urn:clmgit:problem:lease-lost"
#: The header that makes a write conditional on its sender holding the cluster's lease.
LEASE_HEADER = "Clmgit-Lease-Holder"


class Problem(Exception):
    """An HTTP error answer: status, a short title, and one sentence of detail."""

    def __init__(
        self,
        status: int,
        title: str,
        detail: str,
        *,
        type_: str = "about:blank",
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail, self.type = status, title, detail, type_
        self.extra = extra or {}
        #: Headers of the answer, such as `Retry-After`.
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        """The problem document; `extra` adds members (RFC 9457 extensions), e.g. a lease holder."""
        return {
            "type": self.type,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            **self.extra,
        }


def bad_request(detail: str) -> Problem:
    return Problem(400, "Bad Request", detail)


def not_found(detail: str) -> Problem:
    return Problem(404, "Not Found", detail)


def conflict(
    detail: str, *, type_: str = "about:blank", extra: dict[str, Any] | None = None
) -> Problem:
    return Problem(409, "Conflict", detail, type_=type_, extra=extra)
