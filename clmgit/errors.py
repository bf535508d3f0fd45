"""The one error hierarchy. Every user-facing error carries one sentence: what is wrong, what to do.

Exit codes (docs/reference/exit-codes.md) are attached to the classes and read in one place,
`cli.main`: 1 a refusal or user error, 2 usage, 3 unexpected, 4 clusters failed, 5 clusters
skipped (leases held elsewhere), 6 clusters blocked, 130 interrupted.
"""

from __future__ import annotations


class ClmgitError(Exception):
    """A refusal or a user error: printed as one line, exit code 1, nothing written."""

    exit_code = 1


class ConfigError(ClmgitError):
    """A file of the config repo or the registry is missing, malformed or inconsistent."""


class GitError(ClmgitError):
    """A git operation failed or a ref/SHA does not exist."""


class RegistryError(ClmgitError):
    """The cluster registry cannot be read or written."""


class RefusedError(ClmgitError):
    """An operation was refused by a rule: forward-only, a gate, a freeze, a dirty checkout."""


class PushRejectedError(ClmgitError):
    """The remote refused a push; nothing changed locally."""


class TemplateError(ClmgitError):
    """A template of the config repo failed to render."""


class ApplyError(ClmgitError):
    """Applying configuration to a cluster failed (cloud or Kubernetes side)."""


class ClustersFailed(ClmgitError):
    """A reconcile finished, but some clusters failed."""

    exit_code = 4


class ClustersSkipped(ClmgitError):
    """A reconcile finished, but some clusters were not reconciled: other reconcilers held their
    leases (for longer than `--wait-for-leases`)."""

    exit_code = 5


class ClustersBlocked(ClmgitError):
    """A reconcile finished, but some clusters were blocked: their record or the pins keep them
    from being reconciled (`cluster_update_block`, a config source without a pin, a channel
    that does not exist). Nothing failed; not everything was done."""

    exit_code = 6


class Interrupted(ClmgitError):
    """The run was stopped by SIGINT or SIGTERM (exit code 130, as a shell reports Ctrl-C)."""

    exit_code = 130
