"""The one place that hides secrets in text clmgit prints or logs (STYLE.md §13).

`redact` hides credentials in URLs; `Masker` hides known secret values and the forms templates
derive from them. Everything that masks goes through here.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from urllib.parse import quote

MASK = "***"

# `scheme://user:password@` keeps the user; `scheme://token@` (a token in the user position, as
# in `https://x-access-token@github.com`) hides all of it.
_URL_CREDENTIALS = re.compile(r"(\b[a-zA-Z][\w+.-]*://)(?:([^/@\s:]*):)?[^/@\s]+@")


def redact(text: str) -> str:
    """`text` with the credentials of every URL in it replaced by `***`."""
    return _URL_CREDENTIALS.sub(
        lambda m: f"{m[1]}{m[2]}:{MASK}@" if m[2] is not None else f"{m[1]}{MASK}@", text)


def derived_forms(secret: str) -> set[str]:
    """The forms of `secret` that are masked: as written, upper and lower case, URL-encoded, and
    base64 — of the secret alone and of any text that contains it (the three alignments of its
    bytes in a base64 stream, without the characters shared with its neighbours)."""
    forms = {secret, secret.upper(), secret.lower(), quote(secret, safe="")}
    for form in (secret, secret.upper(), secret.lower()):
        raw = form.encode()
        forms.add(base64.b64encode(raw).decode())
        for pad in range(3):
            encoded = base64.b64encode(b"\0" * pad + raw).decode()
            core = encoded[-(-4 * pad // 3): 4 * (pad + len(raw)) // 3]
            if len(core) >= 4:
                forms.add(core)
    return {f for f in forms if f}


class Masker:
    """Replaces each of some secret values, and every derived form of it, by `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = {form for s in secrets for form in derived_forms(s)}
        # Longest first, so that a secret containing another is masked whole.
        ordered = sorted(forms, key=lambda s: (-len(s), s))
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __call__(self, text: str) -> str:
        masked = self._pattern.sub(MASK, text) if self._pattern else text
        return redact(masked)
