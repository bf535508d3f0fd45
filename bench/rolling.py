"""[5/8]: a rolling update of 30 outdated nodes with surge 3, on moto and the emulator.

Real parts throughout: CloudFormation and Auto Scaling on moto (server mode, over HTTP), the
emulator with the official client, the node simulator in a background thread (every 50 ms), the
system clock. The drain's pacing is zero (poll 50 ms, no force interval, no minimum lifetimes);
the grace period keeps its default, so a pod a budget protects is waited for, never forced.
A ReplicaSet of 30 pods under a budget of maxUnavailable 1 makes evictions meet 429s. Asserted:
exactly ceil(30/3) = 10 waves, no pod force-deleted, the budget never below its desired health.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

import boto3
from clmgit_sandbox.aws import ACCOUNT, REGION, moto_server
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_pdb, make_replicaset
from clmgit_sandbox.kubelet import Kubelet
from kubernetes import config

from clmgit.adapters.aws.autoscaling import AutoScalingPools
from clmgit.adapters.aws.cloudformation import CloudFormationStacks
from clmgit.adapters.kube import KubeAPI
from clmgit.engine.clock import Backoff, SystemClock
from clmgit.engine.rolling import roll_node_pool
from clmgit.engine.stacks import apply_stacks, main_stack, node_pool_stack
from clmgit.model import Cluster, NodePool

NODES, SURGE, RUNS = 30, 3, 3
FAST = Backoff(initial=0.05, factor=1.5, maximum=0.5, timeout=120)
ITEMS = {"rolling_update_surge": str(SURGE), "drain_poll_interval": "50ms",
         "drain_force_evict_interval": "0s", "drain_min_pod_lifetime": "0s",
         "drain_min_healthy_sibling_lifetime": "0s", "drain_min_unhealthy_sibling_lifetime": "0s"}
MAIN = "Resources:\n  G:\n    Type: AWS::EC2::SecurityGroup\n    Properties:\n" \
       "      GroupDescription: workers\n"


def pool_template(instance_type: str) -> str:
    return f"""\
Resources:
  LaunchTemplate:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData: {{ImageId: ami-12c6146b, InstanceType: {instance_type}}}
  AutoScalingGroup:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      AvailabilityZones: [eu-central-1a, eu-central-1b, eu-central-1c]
      MinSize: "0"
      MaxSize: "{NODES + SURGE}"
      DesiredCapacity: "{NODES}"
      LaunchTemplate: {{LaunchTemplateId: !Ref LaunchTemplate, Version: $Latest}}
"""


class BudgetWatch:
    """Samples the budget every 10 ms; the lowest healthy count seen against the desired one."""

    def __init__(self, server: KubeAPIServer) -> None:
        self.server, self.violations, self._stop = server, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            status = self.server.read("policy/v1", "PodDisruptionBudget", "web", "default")
            if status and status["status"]["currentHealthy"] < status["status"]["desiredHealthy"]:
                self.violations += 1

    def __enter__(self) -> BudgetWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def one_run(tmp: Path) -> float:
    local_id = f"bench-{uuid.uuid4().hex[:8]}"
    cluster = Cluster(id=f"aws:{ACCOUNT}:{REGION}:{local_id}", local_id=local_id, region=REGION,
                      config_items=ITEMS,
                      node_pools=(NodePool("default", "worker", max_size=NODES + SURGE),))
    session = boto3.Session(region_name=REGION)
    stacks = CloudFormationStacks(session, backoff=FAST)
    pools = AutoScalingPools(session, backoff=FAST)

    def apply(instance_type: str) -> None:
        apply_stacks(stacks, cluster=cluster, main=main_stack(cluster, MAIN), node_pools=[
            node_pool_stack(cluster, "default", pool_template(instance_type))])

    with KubeAPIServer() as server:
        apply("t3.micro")
        kubelet = Kubelet(server, pools, cluster)
        kubelet.sync()
        server.seed(make_replicaset("web", labels={"app": "web"}, replicas=NODES),
                    make_pdb("web", match_labels={"app": "web"}, max_unavailable=1))
        kubelet.sync()
        apply("t3.small")
        api = config.new_client_from_config(
            str(server.write_kubeconfig(tmp / f"{local_id}.kubeconfig")), context="sandbox")
        kube = KubeAPI(api, clock=SystemClock())
        server.stats.reset()
        with kubelet, BudgetWatch(server) as watch:
            began = time.perf_counter()
            result = roll_node_pool(kube, pools, cluster, "default", clock=SystemClock())
            elapsed = time.perf_counter() - began
        api.close()
        forced = server.stats.count("delete", "pods")
        evictions_refused = sum(1 for r in server.stats.records
                                if r.resource == "pods/eviction" and r.code == 429)
    assert result.waves == NODES // SURGE, f"{result.waves} waves"
    assert len(result.replaced) == NODES
    assert forced == 0 and watch.violations == 0, f"forced {forced}, violations {watch.violations}"
    assert not pools.pool_state(cluster, "default").outdated
    print(f"  run: {elapsed:.1f}s, {result.waves} waves, {evictions_refused} evictions refused "
          "(429) and waited for")
    return elapsed


def run() -> list[dict[str, object]]:
    with moto_server(), tempfile.TemporaryDirectory(prefix="clmgit-bench-") as tmp:
        times = [one_run(Path(tmp)) for _ in range(RUNS)]
    return [{
        "benchmark": "rolling update, 30 nodes, surge 3",
        "target": "<= 30 s",
        "median_s": statistics.median(times),
        "detail": f"10 waves asserted, no budget violated, moto + emulator, median of {RUNS} runs",
    }]
