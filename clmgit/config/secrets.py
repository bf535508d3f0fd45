"""Keeping secrets out of what clmgit prints (docs/reference/masking.md): values of config items
whose key looks secret are replaced by `***` in rendered output and diffs.

A value is masked wherever it appears, in the forms `clmgit.redact.derived_forms` lists.
Values shorter than four characters and booleans are left alone: masking every `true` or `3` in
a diff would hide more than it protects.
"""

from __future__ import annotations

import fnmatch

from clmgit.model import Cluster
from clmgit.redact import MASK, Masker

__all__ = ["MASK", "Masker", "is_secret_key", "masker_for", "secret_values"]

SECRET_KEY_PATTERNS = ("*password*", "*token*", "*secret*", "*key*")
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


def masker_for(*clusters: Cluster) -> Masker:
    return Masker(set().union(*(secret_values(c) for c in clusters)))
