"""What a run checks once before any cluster is worked on: that AWS credentials and a way to the
API servers exist at all. Without them every cluster would fail on its own, slowly, one by one."""

from __future__ import annotations

import os

from clmgit.errors import RefusedError


def check_access(*, token: str | None, kubeconfig: str | None) -> None:
    """Refuse, in one sentence, a run that could reach no cluster."""
    from clmgit.adapters.aws.session import credentials_found

    if not credentials_found():
        raise RefusedError("no AWS credentials found (environment, ~/.aws, or an instance or "
                           "web-identity role): configure them and run again")
    if token:
        return
    if not kubeconfig:
        raise RefusedError("no way to reach the clusters' API servers: give --token "
                           "(CLMGIT_TOKEN) or --kubeconfig (CLMGIT_KUBECONFIG)")
    try:
        with open(os.path.expanduser(kubeconfig), "rb"):
            pass
    except OSError as e:
        raise RefusedError(f"cannot read kubeconfig {kubeconfig} ({e.strerror}): give a "
                           "readable --kubeconfig or --token") from None
