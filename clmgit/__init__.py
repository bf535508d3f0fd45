"""clmgit: GitOps channel promotion and reconcile for fleets of Kubernetes clusters on AWS."""

__version__ = "0.1.0"
