"""The real backends of the engine, built per cluster: boto3 in the cluster's region and account
(a role assumed where one is configured, `clmgit.access`), the cluster's API server through a
kubeconfig context, a bearer token or a token from STS (EKS), and the `values` the account's
network gives the templates."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from clmgit.access import EKS, KUBECONFIG, TOKEN, Access, Roles
from clmgit.accounts import ClmAccount
from clmgit.engine.clock import Clock
from clmgit.engine.cluster import BackendFactory, Backends
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster

if TYPE_CHECKING:
    import boto3

    from clmgit.adapters.kube import KubeAPI
    from clmgit.engine.clock import Backoff


def clm_account(cluster: Cluster, roles: Roles) -> ClmAccount:
    """What CLM's computed values ask (network, KMS, instance types, S3), in the cluster's
    account and region."""
    from clmgit.adapters.aws.clmaccount import ClmAccount as Boto3ClmAccount
    from clmgit.adapters.aws.identity import session_for

    return Boto3ClmAccount(session_for(cluster, roles))


def account_check(access: Access) -> Callable[[Cluster], None]:
    """Refuses a cluster the run cannot act on as it should: its record disagrees with itself,
    or names an account the credentials (and the role for it) do not act in. Asked before
    anything is written for the cluster, dry runs too."""
    from clmgit.adapters.aws.identity import session_for

    def check(cluster: Cluster) -> None:
        session_for(cluster, access.roles)
        access.kube_mode(cluster)

    return check


def kube_for(cluster: Cluster, access: Access, session: Callable[[], boto3.Session], *,
             clock: Clock | None = None, backoff: Backoff | None = None) -> KubeAPI:
    """The cluster's API server the way `access` says (`--kube-auth`)."""
    from clmgit.adapters.aws.identity import eks_token
    from clmgit.adapters.kube import RETRY_BACKOFF, connect, connect_eks

    backoff = backoff or RETRY_BACKOFF
    mode = access.kube_mode(cluster)
    if mode == EKS:
        return connect_eks(cluster, lambda: eks_token(session(), cluster.alias or cluster.id),
                           clock=clock, backoff=backoff)
    return connect(cluster, token=access.token if mode == TOKEN else None,
                   kubeconfig=access.kubeconfig if mode == KUBECONFIG else None,
                   clock=clock, backoff=backoff)


def aws_backends(
    *, access: Access | None = None, clock: Clock | None = None, layout: Layout = DEFAULT,
) -> BackendFactory:
    """A factory of real backends. boto3 and the Kubernetes client are imported on first use: a
    run with every cluster in sync needs neither."""
    access = access or Access()

    def make(cluster: Cluster) -> Backends:
        from clmgit.adapters.aws.autoscaling import AutoScalingPools
        from clmgit.adapters.aws.cloudformation import CloudFormationStacks
        from clmgit.adapters.aws.ec2 import network
        from clmgit.adapters.aws.identity import session_for
        from clmgit.config.values import cloud_values

        session = session_for(cluster, access.roles)
        net = network(session, cluster.region)
        return Backends(
            stacks=CloudFormationStacks(session, clock=clock),
            pools=AutoScalingPools(session, clock=clock, layout=layout),
            kube=kube_for(cluster, access, lambda: session, clock=clock),
            values=cloud_values(cluster, zones=net.zones, subnets=net.subnets,
                                vpc_cidr=net.vpc_cidr),
        )

    return make
