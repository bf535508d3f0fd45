"""A node pool on the engine's fakes: one group of four nodes, and the node simulator in small."""

from __future__ import annotations

from clmgit_sandbox.doubles import FakeKube, FakeNodePools

from clmgit.engine.kube import NODES
from clmgit.engine.nodepools import ASG

GROUP = ASG("asg", 0, 8, 4, "lt-1", "1", ("t3.micro",), ("a", "b"))


def sync(kube: FakeKube, pools: FakeNodePools, volumes: frozenset[str] = frozenset()) -> None:
    """A Ready node per instance, none for instances gone (the node simulator, in small)."""
    ids = set(pools.instances)
    for (kind, _, name), obj in list(kube.objects.items()):
        if kind == "Node" and obj["spec"]["providerID"].rpartition("/")[2] not in ids:
            del kube.objects[(kind, "", name)]
    for i in pools.instances.values():
        if kube.get(NODES, f"n-{i.id}") is None:
            kube.add({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": f"n-{i.id}", "labels": {}},
                      "spec": {"providerID": f"aws:///{i.az}/{i.id}"},
                      "status": {"conditions": [{"type": "Ready", "status": "True"}],
                                 "volumesAttached": [{"name": "v"}] if i.az in volumes else []}})
