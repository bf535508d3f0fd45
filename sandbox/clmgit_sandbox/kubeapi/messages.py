"""A request as the API layer sees it, and its response: no HTTP in either."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from clmgit_sandbox.kubeapi.errors import bad_request

_TRUE = {"1", "t", "true"}
_FALSE = {"0", "f", "false", ""}


def parse_bool(name: str, value: Any) -> bool:
    """A boolean parameter, spelled as Go's strconv.ParseBool accepts it."""
    text = str(value).lower()
    if text not in _TRUE | _FALSE:
        raise bad_request(f'invalid value "{value}" for parameter {name}: expected a boolean')
    return text in _TRUE


def parse_int(name: str, value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError) as e:
        raise bad_request(
            f'invalid value "{value}" for parameter {name}: expected an integer'
        ) from e


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    content_type: str = ""
    body: bytes = b""
    user_agent: str = ""
    accept: str = ""

    def flag(self, name: str) -> bool:
        return name in self.query and parse_bool(name, self.query[name])

    def integer(self, name: str) -> int | None:
        return parse_int(name, self.query.get(name))


@dataclass
class Response:
    code: int
    body: Any  # a JSON-able object, or text
    verb: str = "error"
    resource: str = ""
    namespace: str = ""
    name: str = ""
    mutated: bool = False
    #: Extra response headers (e.g. `Warning`), and a media type other than JSON or text.
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = ""
    #: A watch: chunks written as they come, instead of `body`.
    stream: Iterator[bytes] | None = None
