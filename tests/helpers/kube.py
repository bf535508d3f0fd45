"""Reaching the Kubernetes API emulator with the official client."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: The kubeconfig context the emulator fixtures write.
CONTEXT = "sandbox"

#: `raw_call(method, path, *, body=, content_type=, accept=)` → (HTTP status, decoded body).
RawCall = Callable[..., tuple[int, Any]]
