"""A node simulator for tests, the benchmark and the demo: what kubelets, the node controller,
the scheduler and the ReplicaSet/DaemonSet controllers would do, reduced to what the rolling
update needs to meet a cluster that behaves.

`sync()` makes one pass:
- a Node per running instance of the cluster's node pools (read through a `NodePoolBackend`, so
  moto's Auto Scaling groups or the in-memory fake), named `node-<instance id>`, with
  `spec.providerID = aws:///<az>/<instance id>`, labels for zone, pool, instance type and
  hostname, a Ready condition, and `status.volumesAttached` for instances in `volumes`;
- Nodes whose instance is gone are deleted, and the pods bound to them;
- every ReplicaSet gets its missing pods, placed on a Ready, schedulable node (nodes without a
  PreferNoSchedule taint first, then the least loaded), Running and Ready at once;
- every DaemonSet has one Running pod per Ready node (cordoned ones too, as DaemonSets tolerate);
- every Deployment has a ReplicaSet for its current pod template (named after the template's
  hash), older ones scaled to zero, and a status (replicas, updated, ready, available, the
  Available and Progressing conditions) that `kubectl rollout status` and `wait` read;
- ReplicaSets beyond their replicas lose their newest pods; workload statuses are kept current;
- Events as the scheduler, kubelet and deployment controller write them (Scheduled, Pulled,
  Created, Started, Killing, ScalingReplicaSet, RegisteredNode).

It can also misbehave, for health checks (docs/how-to/health-gate.md): a pod whose image tag is
`:broken` never becomes ready and shows CrashLoopBackOff; one whose tag is `:slow` becomes ready
`slow_seconds` after it started (on `clock`, which tests force); the node of an instance in
`not_ready` reports Ready=False.

Call `sync()` from a `FakeClock`'s `on_sleep` so that the engine's waits see the world move, or
`start()` a background thread (and `stop()` it). The thread syncs within `interval` seconds of
any request or write the emulator sees, and otherwise backs off (doubling, up to `idle`
seconds) while passes change nothing: an idle sandbox would else spend half a core asking moto
for instances 20 times a second. A change only moto sees (an instance launched) is noticed
within `idle` seconds, or at once when a client asks the emulator, as a waiting engine does —
or, given `cloud_changes` (moto in this process counts its changing requests), within
`interval`, and then passes ask moto for instances only after such a request.
Objects are written straight into the emulator (`seed`, `remove`), not through the API, so the
emulator's `stats` count only what the code under test does.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from clmgit.engine.nodepools import Instance, NodePoolBackend
from clmgit.model import Cluster
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_node, owner_reference
from clmgit_sandbox.kubeapi.store import Obj

log = logging.getLogger(__name__)

NODE_POOL_LABEL = "node.kubernetes.io/node-pool"
ZONE_LABEL = "topology.kubernetes.io/zone"
KUBELET_VERSION = "v1.31.0"  # the version the emulator reports


def node_name(instance_id: str) -> str:
    return f"node-{instance_id}"


class Kubelet:
    """Keeps the emulator's nodes and workload pods in step with a cluster's instances."""

    def __init__(self, server: KubeAPIServer, pools: NodePoolBackend, cluster: Cluster, *,
                 pool_names: Sequence[str] | None = None,
                 refresh: Callable[[], Cluster] | None = None,
                 clock: Callable[[], float] = time.time, slow_seconds: float = 5.0,
                 cloud_changes: Callable[[], object] | None = None) -> None:
        """`refresh`, if given, is asked for the cluster's record before every pass, so that
        pools added to the registry get nodes (standalone, beside a registry that changes).
        `cloud_changes`, if given, reads a token that changes whenever the instances may have
        (`aws.moto_changes`): passes ask the node pools only then, and the thread wakes."""
        self.server = server
        self.pools = pools
        self.cluster = cluster
        self.pool_names = list(pool_names or [p.name for p in cluster.node_pools])
        self._refresh = refresh
        self._last_inputs: object = None  # what the last pass that changed nothing read
        self.volumes: set[str] = set()  # instance ids whose nodes report attached volumes
        self.not_ready: set[str] = set()  # instance ids whose nodes report Ready=False
        self.clock = clock
        self.slow_seconds = slow_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._cloud_changes = cloud_changes
        self._instances_read: tuple[object, tuple[str, ...]] | None = None  # at which token
        self._instances: dict[tuple[str, str], Instance] = {}

    def sync(self) -> None:
        if self._refresh is not None:
            self.cluster = self._refresh()
            self.pool_names = [p.name for p in self.cluster.node_pools]
        running = self._running()
        store = self.server.cluster.store
        with store.lock:  # one atomic step, as far as clients can tell
            inputs = (store.revision, running, frozenset(self.volumes), tuple(self.pool_names),
                      frozenset(self.not_ready))
            if inputs == self._last_inputs:
                return  # nothing a pass reads has changed since one found nothing to do
            self._sync_nodes(running)
            nodes = [n for n in self.server.objects("v1", "Node") if _ready(n)]
            pods = self.server.objects("v1", "Pod")
            self._reap(pods, {n["metadata"]["name"] for n in self.server.objects("v1", "Node")})
            self._deployments()
            self._replicate(nodes)
            self._daemons(nodes)
            slow = self._slow_pods()
            self._statuses()
            # A pass that wrote nothing, with no slow pod to wait for: the world is settled.
            if store.revision == inputs[0] and not slow:
                self._last_inputs = inputs

    def _running(self) -> dict[tuple[str, str], Instance]:
        """The pools' running instances by (pool, id); asked of the node pools unless the cloud
        says nothing changed since the last time."""
        token = self._cloud_token()
        seen = (token, tuple(self.pool_names))
        if token is None or seen != self._instances_read:
            self._instances = {(pool, i.id): i for pool in self.pool_names
                               for i in self.pools.pool_state(self.cluster, pool).instances
                               if not i.lifecycle_state.startswith("Terminat")}
            self._instances_read = seen
        return self._instances

    def start(self, interval: float = 0.05, *, idle: float = 2.0) -> Kubelet:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, args=(interval, idle),
                                        name="kubelet", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> Kubelet:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self, interval: float, idle: float) -> None:
        backoff = interval
        while not self._stop.is_set():
            before = self._activity()
            try:
                self.sync()
            except Exception:  # a moto hiccup must not end the simulation
                log.exception("kubelet sync failed")
            settled = self._activity()  # our own writes included: the world is still moving
            backoff = interval if settled != before else min(2 * backoff, idle)
            if self._wait(settled, backoff, interval):
                backoff = interval

    def _activity(self) -> tuple[int, int, object]:
        """What moves when anyone uses the emulator (its revision and its request count) or, if
        the kubelet can tell, changes the instances."""
        return (self.server.cluster.store.revision, sum(self.server.stats.by_verb.values()),
                self._cloud_token())

    def _cloud_token(self) -> object:
        """The cloud's change token; None when the kubelet cannot tell (ask every time)."""
        return None if self._cloud_changes is None else self._cloud_changes()

    def _wait(self, settled: tuple[int, int, object], seconds: float, interval: float) -> bool:
        """Wait up to `seconds`, looking every `interval`; True if the emulator saw a request
        or a write meanwhile (a cheap look, unlike a pass, which asks the node pools)."""
        deadline = time.monotonic() + seconds
        while not self._stop.wait(max(0.0, min(interval, deadline - time.monotonic()))):
            if self._activity() != settled:
                return True
            if time.monotonic() >= deadline:
                return False
        return False

    # --- nodes ---

    def _sync_nodes(self, running: dict[tuple[str, str], Instance]) -> None:
        existing = {n["metadata"]["name"]: n for n in self.server.objects("v1", "Node")}
        mine = {node_name(i.id) for i in running.values()}
        for (pool, _), instance in running.items():
            name = node_name(instance.id)
            volumes = instance.id in self.volumes
            if name not in existing:
                node = self.server.seed(self._node(pool, instance, volumes))[0]
                self.server.event(node, "RegisteredNode", f"Node {name} event: Registered Node "
                                  f"{name} in Controller", component="node-controller")
            elif (_has_volumes(existing[name]) != volumes
                  or _ready(existing[name]) == (instance.id in self.not_ready)):
                node = existing[name]
                node["status"]["volumesAttached"] = _volumes(volumes)
                _set_ready(node, instance.id not in self.not_ready)
                self.server.seed(node)
        for name, node in existing.items():
            labels = node["metadata"].get("labels") or {}
            if labels.get(NODE_POOL_LABEL) in self.pool_names and name not in mine:
                self.server.remove("v1", "Node", name)

    def _node(self, pool: str, instance: Instance, volumes: bool) -> Obj:
        name = node_name(instance.id)
        labels = {NODE_POOL_LABEL: pool, ZONE_LABEL: instance.az, "kubernetes.io/hostname": name,
                  "node.kubernetes.io/instance-type": instance.instance_type,
                  "lifecycle-status": "ready"}
        node = make_node(name, labels=labels, provider_id=f"aws:///{instance.az}/{instance.id}")
        node["status"]["volumesAttached"] = _volumes(volumes)
        _set_ready(node, instance.id not in self.not_ready)
        node["status"]["nodeInfo"] = {  # every field: the typed clients require them all
            "kubeletVersion": KUBELET_VERSION, "kubeProxyVersion": KUBELET_VERSION,
            "osImage": "clmgit sandbox node", "kernelVersion": "simulated",
            "containerRuntimeVersion": "simulated://1.0", "operatingSystem": "linux",
            "architecture": "amd64", "machineID": instance.id, "systemUUID": instance.id,
            "bootID": instance.id,
        }
        return node

    # --- pods ---

    def _reap(self, pods: Iterable[Obj], nodes: set[str]) -> None:
        """The pod garbage collector: pods bound to a node that is gone go too."""
        for pod in pods:
            bound = (pod.get("spec") or {}).get("nodeName")
            if bound and bound not in nodes:
                self.server.remove("v1", "Pod", pod["metadata"]["name"],
                                   pod["metadata"]["namespace"])

    def _replicate(self, nodes: list[Obj]) -> None:
        pods = self.server.objects("v1", "Pod")
        load = {n["metadata"]["name"]: 0 for n in nodes}
        for pod in pods:
            bound = (pod.get("spec") or {}).get("nodeName")
            if bound in load:
                load[bound] += 1
        for rs in self.server.objects("apps/v1", "ReplicaSet"):
            owned = [p for p in pods if _owned_by(p, rs) and not p["metadata"].get(
                "deletionTimestamp")]
            wanted = int(rs["spec"].get("replicas", 1))
            for pod in sorted(owned, key=lambda p: p["metadata"]["creationTimestamp"])[wanted:]:
                self.server.event(pod, "Killing", f"Stopping container "
                                  f"{_first_container(pod)}", component="kubelet",
                                  host=pod["spec"].get("nodeName", ""))
                self.server.remove("v1", "Pod", pod["metadata"]["name"],
                                   pod["metadata"]["namespace"])
            for _ in range(wanted - len(owned)):
                target = _schedule(nodes, load)
                if target is None:
                    return
                load[target] += 1
                self._start(self._pod(rs, target))

    def _daemons(self, nodes: list[Obj]) -> None:
        pods = self.server.objects("v1", "Pod")
        for ds in self.server.objects("apps/v1", "DaemonSet"):
            covered = {p["spec"].get("nodeName") for p in pods if _owned_by(p, ds)}
            for node in nodes:
                if node["metadata"]["name"] not in covered:
                    self._start(self._pod(ds, node["metadata"]["name"]))

    def _start(self, pod: Obj) -> None:
        """Seed a pod bound to its node, with the events its start would have."""
        pod = self.server.seed(pod)[0]
        meta, node = pod["metadata"], pod["spec"]["nodeName"]
        self.server.event(pod, "Scheduled", f"Successfully assigned {meta['namespace']}/"
                          f"{meta['name']} to {node}", component="default-scheduler")
        for container in pod["spec"].get("containers") or []:
            name, image = container.get("name", ""), container.get("image", "")
            self.server.event(pod, "Pulled", f'Container image "{image}" already present on '
                              "machine", component="kubelet", host=node)
            self.server.event(pod, "Created", f"Created container {name}", component="kubelet",
                              host=node)
            self.server.event(pod, "Started", f"Started container {name}", component="kubelet",
                              host=node)

    # --- workload controllers ---

    def _deployments(self) -> None:
        """The deployment controller, reduced: one ReplicaSet per template, old ones to zero."""
        sets = self.server.objects("apps/v1", "ReplicaSet")
        for deployment in self.server.objects("apps/v1", "Deployment"):
            if deployment["metadata"].get("deletionTimestamp"):
                continue
            template = copy.deepcopy(deployment["spec"].get("template") or {})
            digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()
            suffix = digest[:10]
            name = f"{deployment['metadata']['name']}-{suffix}"
            wanted = int(deployment["spec"].get("replicas", 1))
            for rs in (r for r in sets if _owned_by(r, deployment)):
                replicas = wanted if rs["metadata"]["name"] == name else 0
                if int(rs["spec"].get("replicas", 1)) != replicas:
                    self._scaled(deployment, rs["metadata"]["name"],
                                 int(rs["spec"].get("replicas", 1)), replicas)
                    rs["spec"]["replicas"] = replicas
                    self.server.seed(rs)
            if not any(r["metadata"]["name"] == name for r in sets):
                self.server.seed(self._replica_set(deployment, name, suffix, template, wanted))
                self._scaled(deployment, name, 0, wanted)

    def _scaled(self, deployment: Obj, rs: str, before: int, after: int) -> None:
        direction = "up" if after > before else "down"
        self.server.event(deployment, "ScalingReplicaSet", f"Scaled {direction} replica set {rs} "
                          f"to {after} from {before}", component="deployment-controller")

    def _replica_set(self, deployment: Obj, name: str, suffix: str, template: Obj,
                     replicas: int) -> Obj:
        meta = deployment["metadata"]
        labels = {**((template.get("metadata") or {}).get("labels") or {}),
                  "pod-template-hash": suffix}
        template.setdefault("metadata", {})["labels"] = labels
        selector = copy.deepcopy(deployment["spec"].get("selector") or {})
        selector.setdefault("matchLabels", {})["pod-template-hash"] = suffix
        return {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": meta["namespace"], "labels": labels,
                         "ownerReferences": [owner_reference(deployment)],
                         "creationTimestamp": self.server.cluster.now()},
            "spec": {"replicas": replicas, "selector": selector, "template": template},
        }

    def _statuses(self) -> None:
        """What the controllers report: ReplicaSets, then Deployments, StatefulSets, DaemonSets."""
        pods = [p for p in self.server.objects("v1", "Pod")
                if not p["metadata"].get("deletionTimestamp")]
        sets = self.server.objects("apps/v1", "ReplicaSet")
        for rs in sets:
            mine = [p for p in pods if _owned_by(p, rs)]
            ready = sum(1 for p in mine if _pod_ready(p))
            self._set_status(rs, {
                "replicas": len(mine), "fullyLabeledReplicas": len(mine), "readyReplicas": ready,
                "availableReplicas": ready,
                "observedGeneration": rs["metadata"].get("generation", 1),
            })
        for deployment in self.server.objects("apps/v1", "Deployment"):
            owned = [r for r in sets if _owned_by(r, deployment)]
            current = [r for r in owned if int(r["spec"].get("replicas", 1)) > 0]
            mine = [p for p in pods if any(_owned_by(p, r) for r in owned)]
            updated = [p for p in pods if any(_owned_by(p, r) for r in current)]
            ready = sum(1 for p in mine if _pod_ready(p))
            wanted = int(deployment["spec"].get("replicas", 1))
            available = ready >= wanted
            now = self.server.cluster.now()
            conditions = [
                _condition("Available", available, "MinimumReplicasAvailable" if available
                           else "MinimumReplicasUnavailable", "Deployment has minimum "
                           "availability." if available else "Deployment does not have "
                           "minimum availability.", now, deployment),
                _condition("Progressing", True, "NewReplicaSetAvailable" if len(updated) >=
                           wanted else "ReplicaSetUpdated", "ReplicaSet has successfully "
                           "progressed.", now, deployment),
            ]
            status = {"observedGeneration": deployment["metadata"].get("generation", 1),
                      "replicas": len(mine), "updatedReplicas": len(updated),
                      "readyReplicas": ready, "availableReplicas": ready,
                      "conditions": conditions}
            if wanted > ready:
                status["unavailableReplicas"] = wanted - ready
            self._set_status(deployment, status)
        for ds in self.server.objects("apps/v1", "DaemonSet"):
            mine = [p for p in pods if _owned_by(p, ds)]
            ready = sum(1 for p in mine if _pod_ready(p))
            self._set_status(ds, {
                "desiredNumberScheduled": len(mine), "currentNumberScheduled": len(mine),
                "updatedNumberScheduled": len(mine), "numberReady": ready,
                "numberAvailable": ready, "numberMisscheduled": 0,
                "observedGeneration": ds["metadata"].get("generation", 1),
            })

    def _set_status(self, obj: Obj, status: Obj) -> None:
        """Write a status only when it says something new (the conditions' times aside)."""
        if _comparable(obj.get("status") or {}) != _comparable(status):
            obj["status"] = status
            self.server.seed(obj)

    def _slow_pods(self) -> bool:
        """`:slow` pods whose time has come become ready; True while some are still waiting."""
        waiting = False
        for pod in self.server.objects("v1", "Pod"):
            at = (pod["metadata"].get("annotations") or {}).get(READY_AT)
            if at is None or _pod_ready(pod):
                continue
            if float(at) <= self.clock():
                pod["status"] = _running(pod)
                self.server.seed(pod)
            else:
                waiting = True
        return waiting

    def _pod(self, owner: Obj, node: str) -> Obj:
        template = owner["spec"].get("template") or {}
        meta = owner["metadata"]
        pod = self._plain_pod(owner, node, template, meta)
        tags = [str(c.get("image", "")).rpartition(":")[2]
                for c in pod["spec"].get("containers") or ()]
        if "broken" in tags:
            pod["status"] = _crash_looping(pod)
        elif "slow" in tags:
            pod["metadata"]["annotations"] = {READY_AT: str(self.clock() + self.slow_seconds)}
            pod["status"] = _starting(pod)
        return pod

    def _plain_pod(self, owner: Obj, node: str, template: Obj, meta: Obj) -> Obj:
        return {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{meta['name']}-{secrets.token_hex(3)}",
                         "namespace": meta["namespace"],
                         "labels": dict((template.get("metadata") or {}).get("labels") or {}),
                         "ownerReferences": [owner_reference(owner)],
                         "creationTimestamp": self.server.cluster.now()},
            "spec": {**(template.get("spec") or {}), "nodeName": node},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }


READY_AT = "sandbox.clmgit.dev/ready-at"


def _container_statuses(pod: Obj, state: Obj, *, ready: bool, restarts: int = 0) -> list[Obj]:
    return [{"name": c.get("name", ""), "image": c.get("image", ""), "imageID": "",
             "ready": ready, "started": ready, "restartCount": restarts, "state": state}
            for c in pod["spec"].get("containers") or ()]


def _crash_looping(pod: Obj) -> Obj:
    """A pod whose container exits at once, again and again (an image tagged `:broken`)."""
    waiting = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting "
                           "failed container"}}
    return {"phase": "Running", "conditions": [{"type": "Ready", "status": "False",
                                                "reason": "ContainersNotReady"}],
            "containerStatuses": _container_statuses(pod, waiting, ready=False, restarts=5)}


def _starting(pod: Obj) -> Obj:
    return {"phase": "Running", "conditions": [{"type": "Ready", "status": "False",
                                                "reason": "ContainersNotReady"}],
            "containerStatuses": _container_statuses(
                pod, {"running": {"startedAt": "1970-01-01T00:00:00Z"}}, ready=False)}


def _running(pod: Obj) -> Obj:
    return {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": _container_statuses(
                pod, {"running": {"startedAt": "1970-01-01T00:00:00Z"}}, ready=True)}


def _set_ready(node: Obj, ready: bool) -> None:
    conditions = [c for c in node["status"].get("conditions") or ()
                  if c.get("type") != "Ready"]
    conditions.append({"type": "Ready", "status": "True" if ready else "False",
                       "reason": "KubeletReady" if ready else "KubeletNotReady",
                       "message": "kubelet is posting ready status" if ready
                       else "container runtime is down"})
    node["status"]["conditions"] = conditions


def _pod_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and _ready(pod)


def _first_container(pod: Obj) -> str:
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    return str(containers[0].get("name", ""))


def _condition(kind: str, ok: bool, reason: str, message: str, now: str, owner: Obj) -> Obj:
    """A workload condition; its times stay as they were while its status does not change."""
    for old in (owner.get("status") or {}).get("conditions") or []:
        if old.get("type") == kind and old.get("status") == ("True" if ok else "False"):
            now = old.get("lastTransitionTime") or now
    return {"type": kind, "status": "True" if ok else "False", "reason": reason,
            "message": message, "lastUpdateTime": now, "lastTransitionTime": now}


def _comparable(status: Obj) -> Obj:
    conditions = [{k: v for k, v in c.items() if not k.endswith("Time")}
                  for c in status.get("conditions") or []]
    return {**status, "conditions": conditions}


def _ready(node: Obj) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _volumes(attached: bool) -> list[Obj]:
    return [{"name": "kubernetes.io/csi/ebs.csi.aws.com^vol-1", "devicePath": ""}] if attached \
        else []


def _has_volumes(node: Obj) -> bool:
    return bool((node.get("status") or {}).get("volumesAttached"))


def _owned_by(pod: Obj, owner: Obj) -> bool:
    uid = owner["metadata"]["uid"]
    return any(ref.get("uid") == uid for ref in pod["metadata"].get("ownerReferences") or ())


def _schedule(nodes: list[Obj], load: dict[str, int]) -> str | None:
    """A schedulable node: untainted (PreferNoSchedule) first, then the least loaded."""
    candidates = [n for n in nodes if not (n.get("spec") or {}).get("unschedulable")]
    if not candidates:
        return None

    def rank(node: Obj) -> tuple[bool, int, str]:
        taints = (node.get("spec") or {}).get("taints") or []
        soft = any(t.get("effect") == "PreferNoSchedule" for t in taints)
        return soft, load[node["metadata"]["name"]], node["metadata"]["name"]

    chosen: str = min(candidates, key=rank)["metadata"]["name"]
    return chosen
