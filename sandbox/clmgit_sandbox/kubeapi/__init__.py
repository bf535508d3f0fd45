"""A Kubernetes API emulator for tests and the sandbox: the REST API served from memory over HTTPS
(plain HTTP too), for the official `kubernetes` client and `kubectl` unmodified, through a
kubeconfig it writes (`KubeAPIServer`). It runs no controllers, kubelet or containers (the node
simulator `clmgit_sandbox.kubelet` plays them); what it does as the API server does, and where it
must differ, is in `server`'s docstring and each module's.
"""

from __future__ import annotations

from clmgit_sandbox.kubeapi.server import DEFAULT_MAX_BODY_BYTES, KubeAPIServer
from clmgit_sandbox.kubeapi.stats import RequestRecord, Stats

__all__ = ["DEFAULT_MAX_BODY_BYTES", "KubeAPIServer", "RequestRecord", "Stats"]
