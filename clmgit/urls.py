"""A URL's host, read one way for the whole package: the API server's (hosted zone, load
balancer certificate, the registry's checks and filters) and a git forge's."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

#: An http(s) URL of printable ASCII whose host[:port] holds no brackets or userinfo: what
#: nearly every record has, and for which urlsplit's netloc is simply the first group.
_PLAIN_URL = re.compile(r"https?://([A-Za-z0-9.:-]*)(?:[/?#][!-~]*)?")


def url_host(url: str, *, port: bool = False) -> str:
    """The host of `url` in lower case, without port or user ("" when it has none or does not
    parse). With `port`: host[:port] as written, what Go's `url.Parse` gives as `Host` (CLM
    derives the hosted zone from it)."""
    if port:
        plain = _PLAIN_URL.fullmatch(url)
        if plain:
            return plain[1]
    try:
        parts = urlsplit(url)
        return parts.netloc.rpartition("@")[2] if port else parts.hostname or ""
    except ValueError:
        return ""
