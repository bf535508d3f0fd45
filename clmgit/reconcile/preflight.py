"""What a run checks once before any cluster is worked on: that AWS credentials and a way to the
API servers exist at all. Without them every cluster would fail on its own, slowly, one by one.
(Which account each cluster is in is checked per cluster: `clmgit.reconcile.backends`.)"""

from __future__ import annotations

import os
from collections.abc import Sequence

from clmgit.access import KUBECONFIG, Access
from clmgit.errors import ConfigError, RefusedError
from clmgit.model import Cluster


def check_access(access: Access, clusters: Sequence[Cluster] = ()) -> None:
    """Refuse, in one sentence, a run that could reach no cluster."""
    from clmgit.adapters.aws.session import credentials_found

    if not credentials_found():
        raise RefusedError("no AWS credentials found (environment, ~/.aws, or an instance or "
                           "web-identity role): configure them and run again")
    try:
        modes = {access.kube_mode(c) for c in clusters}
    except ConfigError as e:
        raise RefusedError(str(e)) from None
    if KUBECONFIG not in modes or access.kubeconfig is None:
        return
    try:
        with open(os.path.expanduser(access.kubeconfig), "rb"):
            pass
    except OSError as e:
        raise RefusedError(f"cannot read kubeconfig {access.kubeconfig} ({e.strerror}): give a "
                           "readable --kubeconfig or --token") from None
