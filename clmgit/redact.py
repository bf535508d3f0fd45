"""The one place that hides secrets in text clmgit prints or logs (STYLE.md §13).

`redact` hides credentials in URLs; `Masker` hides known secret values and the forms templates
derive from them; `redact_secrets` hides credentials in what libraries log (headers, bearer
tokens, AWS keys), and `LogRedactor` applies it to every log record the CLI emits. Everything
that masks goes through here.
"""

from __future__ import annotations

import base64
import logging
import os
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


#: Names whose value is a credential, as headers (`Authorization: ...`), dict entries
#: (`'X-Amz-Security-Token': b'...'`, botocore's debug log of a request), canonical request
#: lines (`x-amz-security-token:...`) or query parameters.
_SECRET_NAMES = (r"authorization|proxy-authorization|x-amz-security-token|x-amz-signature"
                 r"|aws_secret_access_key|aws_session_token|secret_access_key|session_token"
                 r"|secretaccesskey|sessiontoken|token|password")
#: A quoted value after such a name: masked up to its closing quote.
_QUOTED = re.compile(
    rf"""(?i)(\b(?:{_SECRET_NAMES})['"]?\s*[:=]\s*b?)(['"])(?:\\.|(?!\2).)*\2""")
#: An unquoted value after such a name: masked to the end of the word (`Bearer x` whole).
_BARE = re.compile(
    rf"""(?i)(\b(?:{_SECRET_NAMES})\s*[:=]\s*)(?!b?['"])(?:(?:bearer|basic)\s+)?[^\s'",&;]+""")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+")
#: An XML element of such a name (STS's AssumeRole answer, in botocore's debug log of it).
_ELEMENT = re.compile(rf"(?i)(<({_SECRET_NAMES})>)[^<]*(</\2>)")
#: Environment variables that hold credentials clmgit or its libraries use.
SECRET_VARIABLES = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
                    "CLMGIT_TOKEN", "CLMGIT_REGISTRY_TOKEN", "GITHUB_TOKEN")
#: Shorter values are not masked wherever they appear: they would hide ordinary words.
_MIN_SECRET = 6


def redact_secrets(text: str) -> str:
    """`text` with credentials hidden: the values of credential headers, fields and query
    parameters, bearer tokens, and URL credentials (`redact`)."""
    text = _ELEMENT.sub(lambda m: f"{m[1]}{MASK}{m[3]}", text)
    text = _QUOTED.sub(lambda m: f"{m[1]}{m[2]}{MASK}{m[2]}", text)
    text = _BARE.sub(lambda m: f"{m[1]}{MASK}", text)
    return redact(_BEARER.sub(lambda m: f"{m[1]}{MASK}", text))


def environment_secrets(environ: dict[str, str] | None = None) -> set[str]:
    """The credential values in the environment (`SECRET_VARIABLES`, comma-separated lists
    split), long enough to be masked wherever they appear."""
    environ = dict(os.environ) if environ is None else environ
    values = {part.strip() for name in SECRET_VARIABLES
              for part in environ.get(name, "").split(",")}
    return {v for v in values if len(v) >= _MIN_SECRET}


class LogRedactor(logging.Filter):
    """A handler's filter that hides credentials in every record it emits, whatever library
    logged it (botocore's debug log shows request headers, the session token among them):
    the message with its arguments, and the text of an exception. Known secret values
    (`secrets`, e.g. `environment_secrets()`) are hidden in every form `Masker` knows."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._masker = Masker(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.hide(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.hide(record.exc_text)
        if record.stack_info:
            record.stack_info = self.hide(record.stack_info)
        return True

    def hide(self, text: str) -> str:
        """`text` with credentials and the known secret values hidden."""
        return self._masker(redact_secrets(text))
