"""Credentials out of text before it reaches output or logs: one rule for every message that may
carry a URL (git's own error output, database URLs, registry and repository locations)."""

from __future__ import annotations

import re

# scheme://user:password@host or scheme://token@host (a lone user part in an HTTPS URL is how
# tokens are usually passed, e.g. https://x-access-token@github.com or https://TOKEN@host).
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^/@\s:]*)(?P<pw>:[^/@\s]*)?@")


def redact_urls(text: str) -> str:
    """`text` with the secret part of every URL's user info replaced by `***`: the password when
    there is one (the user name stays, it helps to debug), else the whole user part."""

    def hide(m: re.Match[str]) -> str:
        if m["pw"] is not None:
            return f"{m['scheme']}{m['user']}:***@"
        return f"{m['scheme']}***@"

    return _USERINFO.sub(hide, text)
