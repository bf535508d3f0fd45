"""The real backends of the engine, built per cluster: boto3 in the cluster's region (standard AWS
configuration), the cluster's API server with a bearer token or through a kubeconfig context,
and the `values` the account's network gives the templates."""

from __future__ import annotations

from clmgit.accounts import ClmAccount
from clmgit.engine.clock import Clock
from clmgit.engine.cluster import BackendFactory, Backends
from clmgit.layout import DEFAULT, Layout
from clmgit.model import Cluster


def clm_account(cluster: Cluster) -> ClmAccount:
    """What CLM's computed values ask (network, KMS, instance types, S3), in the cluster's
    account and region."""
    from clmgit.adapters.aws.clmaccount import ClmAccount as Boto3ClmAccount
    from clmgit.adapters.aws.session import session_for

    return Boto3ClmAccount(session_for(cluster))


def aws_backends(
    *, token: str | None = None, kubeconfig: str | None = None, clock: Clock | None = None,
    layout: Layout = DEFAULT,
) -> BackendFactory:
    """A factory of real backends. boto3 and the Kubernetes client are imported on first use: a
    run with every cluster in sync needs neither."""

    def make(cluster: Cluster) -> Backends:
        from clmgit.adapters.aws.autoscaling import AutoScalingPools
        from clmgit.adapters.aws.cloudformation import CloudFormationStacks
        from clmgit.adapters.aws.ec2 import network
        from clmgit.adapters.aws.session import session_for
        from clmgit.adapters.kube import connect
        from clmgit.config.values import cloud_values

        session = session_for(cluster)
        net = network(session, cluster.region)
        return Backends(
            stacks=CloudFormationStacks(session, clock=clock),
            pools=AutoScalingPools(session, clock=clock, layout=layout),
            kube=connect(cluster, token=token, kubeconfig=kubeconfig),
            values=cloud_values(cluster, zones=net.zones, subnets=net.subnets,
                                vpc_cidr=net.vpc_cidr),
        )

    return make
