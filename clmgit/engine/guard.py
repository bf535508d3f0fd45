"""The lease as part of the engine's work: one guard in front of everything the engine reaches
the outside world through.

A reconciler holds a lease on a cluster while its engine works on it (clmgit.reconcile.leases).
The engine itself knows nothing of leases; it is given a `LeaseCheck` and wraps the cluster's
backends (CloudFormation, Auto Scaling, the Kubernetes API, the account CLM's values read) so
that every call through them asks the check first. The check is a local read of a deadline the
renewal loop extends, so it costs nothing next to a network call; when it says the lease is gone
the call raises `LeaseExpired` instead of being made, and the cluster stops at once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from clmgit.errors import ApplyError

T = TypeVar("T")

#: Raises `LeaseExpired` when the lease of the cluster (by id) is no longer safely held.
LeaseCheck = Callable[[str], None]


class LeaseExpired(ApplyError):
    """The cluster's lease was lost or could not be renewed in time: the engine stopped before
    its next write, and another reconciler may be working on the cluster now."""


def no_lease_check(cluster_id: str) -> None:
    """The check of an engine used without leases (tests, `render`, a dry run)."""


def guarded(target: T, check: Callable[[], None]) -> T:
    """`target` with `check()` called before each of its public methods runs."""
    if target is None:
        return target
    return cast(T, _Guarded(target, check))


class _Guarded:
    __slots__ = ("_target", "_check")

    def __init__(self, target: object, check: Callable[[], None]) -> None:
        self._target = target
        self._check = check

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name.startswith("_") or not callable(value):
            return value
        check = self._check

        @functools.wraps(value)
        def call(*args: Any, **kwargs: Any) -> Any:
            check()
            return value(*args, **kwargs)

        return call
