"""CLM's Karpenter node pools (layout `clm`): a pool of profile `worker-karpenter` has no stack;
its rendered `provisioners.yaml` is applied to the cluster like the manifests, and Karpenter's
objects of pools no longer in the registry are deleted, as CLM's Karpenter provisioner does:
every `NodePool` (karpenter.sh/v1) and `EC2NodeClass` (karpenter.k8s.aws/v1) whose name is not
a Karpenter pool of the cluster."""

from __future__ import annotations

from collections.abc import Collection

from clmgit.engine.kube import KubeClient

#: (apiVersion, kind) of the objects CLM cleans up, in its order.
ORPHAN_KINDS = (("karpenter.sh/v1", "NodePool"), ("karpenter.k8s.aws/v1", "EC2NodeClass"))


def remove_orphans(kube: KubeClient, pools: Collection[str], *,
                   dry_run: bool = False) -> list[str]:
    """Delete Karpenter's objects of pools not in `pools`; what was (or would be) deleted.
    A cluster without Karpenter's CRDs has nothing to clean up."""
    removed = []
    for api_version, kind_name in ORPHAN_KINDS:
        kind = kube.resolve(kind_name, api_version)
        if kind is None:
            continue
        for obj in kube.list(kind):
            name = obj["metadata"]["name"]
            if name not in pools:
                kube.delete(kind, name, dry_run=dry_run)
                removed.append(f"{kind_name} {name}")
    return removed
