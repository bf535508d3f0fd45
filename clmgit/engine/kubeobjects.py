"""The raw Kubernetes objects the engine reads, as the API serves them (JSON): nodes, pods,
workloads, budgets, Jobs and the metadata of any object.

Only the fields the engine reads are named; an object carries more, and every field may be
absent (`total=False`), as in the API's Go types with `omitempty`. `KubeClient` returns a
plain `Obj` for any kind: where the engine asks for a kind it knows (`NODES`, `PODS`, …) it reads
the answer as the type below. Objects the engine builds or applies (manifests, patches) stay
`Obj`: they are any JSON.
"""

from __future__ import annotations

from typing import TypedDict

from clmgit.engine.fieldsv1 import FieldsV1


class OwnerReference(TypedDict, total=False):
    kind: str
    uid: str


class ManagedFieldsEntry(TypedDict, total=False):
    manager: str
    operation: str  # "Apply" or "Update"
    fieldsV1: FieldsV1
    subresource: str


class ObjectMeta(TypedDict, total=False):
    name: str
    namespace: str
    uid: str
    generation: int
    resourceVersion: str
    creationTimestamp: str
    deletionTimestamp: str
    deletionGracePeriodSeconds: int
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]
    managedFields: list[ManagedFieldsEntry]


class Condition(TypedDict, total=False):
    type: str
    status: str  # "True", "False" or "Unknown"
    reason: str
    message: str


class LabelSelectorRequirement(TypedDict, total=False):
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: list[str]


class LabelSelector(TypedDict, total=False):
    matchLabels: dict[str, str]
    matchExpressions: list[LabelSelectorRequirement]


class Metadata(TypedDict, total=False):
    """Any object, read for its identity and metadata only; each kind below is one."""

    kind: str
    metadata: ObjectMeta


# --- nodes ----------------------------------------------------------------------------------


class Taint(TypedDict, total=False):
    key: str
    value: str
    effect: str


class NodeSpec(TypedDict, total=False):
    providerID: str  # aws:///<az>/<instance id>
    unschedulable: bool
    taints: list[Taint]


class NodeStatus(TypedDict, total=False):
    conditions: list[Condition]
    volumesAttached: list[dict[str, str]]


class Node(Metadata, total=False):
    spec: NodeSpec
    status: NodeStatus


# --- pods -----------------------------------------------------------------------------------


class ContainerStateWaiting(TypedDict, total=False):
    reason: str


class ContainerState(TypedDict, total=False):
    waiting: ContainerStateWaiting


class ContainerStatus(TypedDict, total=False):
    name: str
    restartCount: int
    state: ContainerState


class PodSpec(TypedDict, total=False):
    terminationGracePeriodSeconds: int


class PodStatus(TypedDict, total=False):
    phase: str
    conditions: list[Condition]
    containerStatuses: list[ContainerStatus]
    initContainerStatuses: list[ContainerStatus]


class Pod(Metadata, total=False):
    spec: PodSpec
    status: PodStatus


class PodDisruptionBudgetSpec(TypedDict, total=False):
    selector: LabelSelector


class PodDisruptionBudget(Metadata, total=False):
    spec: PodDisruptionBudgetSpec


# --- workloads: Deployments, StatefulSets, DaemonSets (and ReplicaSets' metadata) ----------


class RollingUpdate(TypedDict, total=False):
    partition: int


class UpdateStrategy(TypedDict, total=False):
    type: str
    rollingUpdate: RollingUpdate


class WorkloadSpec(TypedDict, total=False):
    replicas: int
    updateStrategy: UpdateStrategy  # StatefulSet, DaemonSet


class WorkloadStatus(TypedDict, total=False):
    observedGeneration: int
    conditions: list[Condition]
    replicas: int
    updatedReplicas: int
    readyReplicas: int
    availableReplicas: int
    currentRevision: str  # StatefulSet
    updateRevision: str
    desiredNumberScheduled: int  # DaemonSet
    updatedNumberScheduled: int
    numberAvailable: int


class Workload(Metadata, total=False):
    spec: WorkloadSpec
    status: WorkloadStatus


# --- Jobs (health checks) -------------------------------------------------------------------


class JobStatus(TypedDict, total=False):
    conditions: list[Condition]
    succeeded: int


class Job(Metadata, total=False):
    status: JobStatus
