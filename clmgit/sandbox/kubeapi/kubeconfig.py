"""Kubeconfig files pointing at the emulator: one context per name, all on the same server."""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

USER = "clmgit-sandbox"


def cluster_entry(url: str, ca_pem: bytes | None) -> dict[str, Any]:
    """A kubeconfig `cluster`: the server, and the CA that signed its certificate if any."""
    entry: dict[str, Any] = {"server": url}
    if ca_pem:
        entry["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return entry


def kubeconfig(
    url: str,
    token: str,
    context_names: Sequence[str],
    namespace: str = "default",
    *,
    ca_pem: bytes | None = None,
) -> dict[str, Any]:
    """A kubeconfig whose contexts (named e.g. after cluster ids or aliases) all reach `url`."""
    if not context_names:
        raise ValueError("a kubeconfig needs at least one context name")
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [
            {"name": name, "cluster": cluster_entry(url, ca_pem)} for name in context_names
        ],
        "users": [{"name": USER, "user": {"token": token}}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": USER, "namespace": namespace}}
            for name in context_names
        ],
        "current-context": context_names[0],
    }


def write_kubeconfig(path: str | os.PathLike[str], content: dict[str, Any]) -> Path:
    """Write `content` readable by its owner only: it holds a bearer token."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        yaml.safe_dump(content, handle, sort_keys=False)
    return target
