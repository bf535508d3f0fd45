"""A rendered value equal in content to what is deployed keeps the deployed bytes.

Some values of a template are an encoding of their content, and two encoders write different
bytes for the same content. The one that matters: `Values.UserData`, a node pool's
`userdata.yaml` gzipped and base64-encoded. CLM gzips with Go's `compress/gzip`, clmgit with
Python's zlib; the texts inside are equal, the bytes are not — and Go's own bytes changed between
Go versions (its flate was rewritten), so matching one encoder byte for byte would break with the
next. A launch template whose user data changes gets a new version, and every node of the pool
is then replaced: taking over a cluster CLM made would roll the whole fleet for nothing.

So before a stack is changed, its rendered template is compared with the deployed one, and each
base64 gzip value of the rendered template whose decompressed content equals that of a value in
the deployed template is written as the deployed value. A value whose content differs is left as
rendered, so a real change still changes the stack. Nothing else is touched: the rule only ever
swaps one encoding of a content for another encoding of the same content.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
import zlib
from collections.abc import Mapping
from typing import Any

#: base64 of a gzip stream: its magic bytes 1f 8b 08 read as "H4sI".
GZIP_BASE64 = re.compile(r"H4sI[A-Za-z0-9+/]*={0,2}")


def gunzipped(value: str) -> bytes | None:
    """The content of a base64 gzip value; None if it is not one."""
    try:
        return gzip.decompress(base64.b64decode(value, validate=True))
    except (binascii.Error, OSError, EOFError, zlib.error):
        return None


def keep_deployed_encodings(rendered: str, deployed: str | Mapping[str, Any]) -> str:
    """`rendered` with each base64 gzip value whose content a value of `deployed` has written as
    that deployed value. `deployed` is the template as CloudFormation gives it back (a JSON
    template may come parsed)."""
    text = deployed if isinstance(deployed, str) else json.dumps(deployed)
    by_content: dict[bytes, str] = {}
    for token in GZIP_BASE64.findall(text):
        content = gunzipped(token)
        if content is not None:
            by_content.setdefault(content, token)
    if not by_content:
        return rendered

    def keep(match: re.Match[str]) -> str:
        content = gunzipped(match.group(0))
        return by_content.get(content, match.group(0)) if content is not None else match.group(0)

    return GZIP_BASE64.sub(keep, rendered)
