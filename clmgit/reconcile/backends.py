"""The real backends of the engine and of the look at health, built per cluster by one factory
(`AwsBackends`): boto3 in the cluster's region and account (a role assumed where one is
configured, `clmgit.access`), the cluster's API server through a kubeconfig context, a bearer
token or a token from STS (EKS), and the `values` the account's network gives the templates."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clmgit.access import EKS, KUBECONFIG, TOKEN, Access, Roles
from clmgit.accounts import ClmAccount
from clmgit.engine.clock import Backoff, Clock
from clmgit.engine.cluster import Backends
from clmgit.engine.health import HealthBackends
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster

if TYPE_CHECKING:
    import boto3

    from clmgit.adapters.kube import KubeAPI


def clm_account(cluster: Cluster, roles: Roles) -> ClmAccount:
    """What CLM's computed values ask (network, KMS, instance types, S3), in the cluster's
    account and region."""
    from clmgit.adapters.aws.clmaccount import ClmAccount as Boto3ClmAccount
    from clmgit.adapters.aws.identity import session_for

    return Boto3ClmAccount(session_for(cluster, roles))


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


#: A look at health must not wait a minute for an API server that is down: that is `unknown`.
HEALTH_BACKOFF = Backoff(initial=0.2, factor=2, maximum=1, timeout=2)


@dataclass(frozen=True)
class AwsBackends:
    """The one factory of real backends, which the engine (`__call__`) and the look at health
    (`health`) both ask: the same credentials, account check and endpoints for both. boto3 and
    the Kubernetes client are imported on first use: a run with every cluster in sync needs
    neither."""

    access: Access = field(default_factory=Access)
    clock: Clock | None = None
    layout: Layout = DEFAULT

    def check(self, cluster: Cluster) -> boto3.Session:
        """The cluster's session, once its record and account pass: a cluster the run cannot
        act on as it should (its record disagrees with itself, or names an account the
        credentials and the role for it do not act in) is refused here, before anything is read
        or written for it. A run asks it of every cluster it will act on, dry runs too."""
        from clmgit.adapters.aws.identity import session_for

        session = session_for(cluster, self.access.roles)
        self.access.kube_mode(cluster)
        return session

    def health(self, cluster: Cluster) -> HealthBackends:
        """What a look at health reads: no network values, short retries."""
        return self._reading(cluster, self.check(cluster), HEALTH_BACKOFF)

    def __call__(self, cluster: Cluster) -> Backends:
        """What the engine works through: what a look reads, with the engine's retries, and the
        values the account's network gives the templates."""
        from clmgit.adapters.aws.ec2 import network
        from clmgit.adapters.kube import RETRY_BACKOFF
        from clmgit.config.values import cloud_values

        session = self.check(cluster)
        seen = self._reading(cluster, session, RETRY_BACKOFF)
        net = network(session, cluster.region)
        return Backends(seen.stacks, seen.pools, seen.kube,
                        values=cloud_values(cluster, zones=net.zones, subnets=net.subnets,
                                            vpc_cidr=net.vpc_cidr))

    def _reading(self, cluster: Cluster, session: boto3.Session,
                 backoff: Backoff) -> HealthBackends:
        from clmgit.adapters.aws.autoscaling import AutoScalingPools
        from clmgit.adapters.aws.cloudformation import CloudFormationStacks

        return HealthBackends(
            stacks=CloudFormationStacks(session, clock=self.clock),
            pools=AutoScalingPools(session, clock=self.clock, layout=self.layout),
            kube=kube_for(cluster, self.access, lambda: session, clock=self.clock,
                          backoff=backoff),
        )
