"""clmgit: GitOps channel promotion and reconcile for fleets of Kubernetes clusters on AWS.

The top-level modules are the model every package shares (records, channel files, layout,
durations, errors, round-trip YAML edits, redaction, output formats) and import no other part of
clmgit; `workspace` (what a command runs in) and `views` (how results look) sit above them. The
work is in the subpackages; the test world is the separate `clmgit_sandbox`, never imported here.
"""

__version__ = "0.1.0"
