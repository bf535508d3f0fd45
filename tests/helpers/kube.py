"""Reaching the Kubernetes API emulator with the official client."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clmgit_sandbox.kubeapi import KubeAPIServer

#: The kubeconfig context the emulator fixtures write.
CONTEXT = "sandbox"

#: `raw_call(method, path, *, body=, content_type=, accept=)` → (HTTP status, decoded body).
RawCall = Callable[..., tuple[int, Any]]


def must_read(server: KubeAPIServer, api_version: str, kind: str, name: str,
           namespace: str = "") -> dict[str, Any]:
    """The stored object a test expects to be there (`KubeAPIServer.read` without the None)."""
    obj = server.read(api_version, kind, name, namespace)
    assert obj is not None, f"the emulator stores no {kind} {namespace}/{name}"
    return obj
