"""Kubeconfig files pointing at emulators: a cluster, a user and a context per name."""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

Entry = dict[str, Any]


def cluster_entry(url: str, ca_pem: bytes | None) -> dict[str, Any]:
    """A kubeconfig `cluster`: the server, and the CA that signed its certificate if any."""
    entry: dict[str, Any] = {"server": url}
    if ca_pem:
        entry["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return entry


def named_entries(name: str, url: str, token: str, *, ca_pem: bytes | None = None,
                  namespace: str | None = None) -> tuple[Entry, Entry, Entry]:
    """The cluster, user and context of one context `name`, all three named after it: merged
    kubeconfigs of several emulators (`KUBECONFIG=a:b`) keep the first entry of each name, so a
    user shared by name would give every context the first file's token."""
    user = f"{name}-admin"
    context: Entry = {"cluster": name, "user": user}
    if namespace is not None:
        context["namespace"] = namespace
    return ({"name": name, "cluster": cluster_entry(url, ca_pem)},
            {"name": user, "user": {"token": token}},
            {"name": name, "context": context})


def document(entries: Sequence[tuple[Entry, Entry, Entry]]) -> dict[str, Any]:
    """A kubeconfig of (cluster, user, context) entries; the first context is the current one."""
    if not entries:
        raise ValueError("a kubeconfig needs at least one context name")
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [cluster for cluster, _, _ in entries],
        "users": [user for _, user, _ in entries],
        "contexts": [context for _, _, context in entries],
        "current-context": entries[0][2]["name"],
    }


def kubeconfig(
    url: str,
    token: str,
    context_names: Sequence[str],
    namespace: str = "default",
    *,
    ca_pem: bytes | None = None,
) -> dict[str, Any]:
    """A kubeconfig whose contexts (named e.g. after cluster ids or aliases) all reach `url`."""
    return document([named_entries(name, url, token, ca_pem=ca_pem, namespace=namespace)
                     for name in context_names])


def write_kubeconfig(path: str | os.PathLike[str], content: dict[str, Any]) -> Path:
    """Write `content` readable by its owner only: it holds a bearer token."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        yaml.safe_dump(content, handle, sort_keys=False)
    return target
