"""Keeping secrets out of what clmgit prints (DESIGN.md §3): values of config items whose key
looks secret are replaced by `***` in rendered output and diffs.

A value is masked wherever it appears, raw or base64-encoded (how Kubernetes Secrets carry it).
Values shorter than four characters and booleans are left alone: masking every `true` or `3` in
a diff would hide more than it protects.
"""

from __future__ import annotations

import base64
import fnmatch
import re
from collections.abc import Iterable

from clmgit.model import Cluster

SECRET_KEY_PATTERNS = ("*password*", "*token*", "*secret*", "*key*")
MASK = "***"
_MIN_LENGTH = 4
_NOT_SECRETS = frozenset({"true", "false", "yes", "no", "null", "none"})


def is_secret_key(key: str) -> bool:
    return any(fnmatch.fnmatchcase(key.lower(), pattern) for pattern in SECRET_KEY_PATTERNS)


def secret_values(cluster: Cluster) -> set[str]:
    """The values of the cluster's and its node pools' secret-looking config items."""
    items = [cluster.config_items, *(p.config_items for p in cluster.node_pools)]
    return {
        value for mapping in items for key, value in mapping.items()
        if is_secret_key(key) and len(value) >= _MIN_LENGTH and value.lower() not in _NOT_SECRETS
    }


class Masker:
    """Replaces each of some secret values, and its base64 form, by `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = {form for s in secrets for form in (s, base64.b64encode(s.encode()).decode())}
        # Longest first, so that a secret containing another is masked whole.
        ordered = sorted(forms, key=lambda s: (-len(s), s))
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __call__(self, text: str) -> str:
        return self._pattern.sub(MASK, text) if self._pattern else text


def masker_for(*clusters: Cluster) -> Masker:
    return Masker(set().union(*(secret_values(c) for c in clusters)))
