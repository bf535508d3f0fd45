"""Server-side `Table` output: what `kubectl get` shows, column by column.

A client that sends `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` gets a `Table` of
the objects instead of the object or list: column definitions, and per object its cells plus
the object itself (`includeObject=Object`), its metadata only (`Metadata`, the default) or
nothing (`None`). Built-in kinds have the columns of the API server's printers (priority 1 ones
show with `-o wide`); custom resources have their CRD's `additionalPrinterColumns` (simple
JSONPaths) after Name, and Age unless the CRD defines its own columns.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from clmgit_sandbox.kubeapi.errors import bad_request
from clmgit_sandbox.kubeapi.resources import ResourceType
from clmgit_sandbox.kubeapi.store import Obj

Column = tuple[str, str, int, Callable[[Obj, dt.datetime], Any]]  # name, type, priority, cell


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def _api_version(accept: str) -> str:
    for part in accept.split(","):
        if "as=Table" in part:
            version = re.search(r"\bv=(v1beta1|v1)\b", part)
            return f"meta.k8s.io/{version.group(1) if version else 'v1'}"
    return "meta.k8s.io/v1"


def _parse_time(text: Any) -> dt.datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    """The API server's short duration format: 45s, 5m3s, 12m, 3h4m, 20h, 4d5h, 30d, 2y40d."""
    s = max(int(seconds), 0)
    minutes, hours, days = s // 60, s // 3600, s // 86400
    if s < 120:
        return f"{s}s"
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 730:
        return f"{days}d"
    return f"{days // 365}y{days % 365}d"


def _age_of(text: Any, now: dt.datetime) -> str:
    when = _parse_time(text)
    return human_duration((now - when).total_seconds()) if when else "<unknown>"


def _age(obj: Obj, now: dt.datetime) -> str:
    return _age_of((obj.get("metadata") or {}).get("creationTimestamp"), now)


def _name(obj: Obj, now: dt.datetime) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _get(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _or_none(value: Any) -> Any:
    return "<none>" if value in (None, "", [], {}) else value


def _containers(obj: Obj, now: dt.datetime) -> str:
    spec = _get(obj, "spec", "template", "spec") or {}
    return ",".join(c.get("name", "") for c in spec.get("containers") or [])


def _images(obj: Obj, now: dt.datetime) -> str:
    spec = _get(obj, "spec", "template", "spec") or {}
    return ",".join(c.get("image", "") for c in spec.get("containers") or [])


def _selector(obj: Obj, now: dt.datetime) -> str:
    selector = _get(obj, "spec", "selector") or {}
    labels = selector.get("matchLabels", selector) if isinstance(selector, dict) else {}
    parts = [f"{k}={v}" for k, v in sorted(labels.items()) if isinstance(v, str)]
    return ",".join(parts) or "<none>"


def _int(*path: str) -> Callable[[Obj, dt.datetime], int]:
    return lambda obj, now: int(_get(obj, *path) or 0)


# --- pods ---


def _pod_ready(obj: Obj, now: dt.datetime) -> str:
    containers = _get(obj, "spec", "containers") or []
    statuses = _get(obj, "status", "containerStatuses")
    if statuses is None:
        ready = len(containers) if _pod_condition(obj, "Ready") else 0
    else:
        ready = sum(1 for s in statuses if s.get("ready"))
    return f"{ready}/{len(containers)}"


def _pod_condition(obj: Obj, kind: str) -> bool:
    conditions = _get(obj, "status", "conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def _pod_status(obj: Obj, now: dt.datetime) -> str:
    if _get(obj, "metadata", "deletionTimestamp"):
        return "Terminating"
    return str(_get(obj, "status", "reason") or _get(obj, "status", "phase") or "Unknown")


def _pod_restarts(obj: Obj, now: dt.datetime) -> int:
    statuses = _get(obj, "status", "containerStatuses") or []
    return sum(int(s.get("restartCount") or 0) for s in statuses)


# --- nodes ---


def _node_status(obj: Obj, now: dt.datetime) -> str:
    status = "Ready" if _pod_condition(obj, "Ready") else "NotReady"
    return status + (",SchedulingDisabled" if _get(obj, "spec", "unschedulable") else "")


def _node_roles(obj: Obj, now: dt.datetime) -> str:
    labels = _get(obj, "metadata", "labels") or {}
    roles = sorted(
        key.split("/", 1)[1] for key in labels if key.startswith("node-role.kubernetes.io/")
    )
    role = labels.get("kubernetes.io/role")
    if role:
        roles.append(role)
    return ",".join(roles) or "<none>"


def _node_address(kind: str) -> Callable[[Obj, dt.datetime], str]:
    def cell(obj: Obj, now: dt.datetime) -> str:
        for address in _get(obj, "status", "addresses") or []:
            if address.get("type") == kind:
                return str(address.get("address", ""))
        return "<none>"

    return cell


# --- services, events, misc ---


def _service_ports(obj: Obj, now: dt.datetime) -> str:
    ports = _get(obj, "spec", "ports") or []
    parts = []
    for port in ports:
        text = f"{port.get('port')}"
        if port.get("nodePort"):
            text += f":{port['nodePort']}"
        parts.append(f"{text}/{port.get('protocol', 'TCP')}")
    return ",".join(parts) or "<none>"


def _external_ip(obj: Obj, now: dt.datetime) -> str:
    ips = list(_get(obj, "spec", "externalIPs") or [])
    for ingress in _get(obj, "status", "loadBalancer", "ingress") or []:
        ips.append(ingress.get("ip") or ingress.get("hostname") or "")
    if ips:
        return ",".join(ips)
    return "<pending>" if _get(obj, "spec", "type") == "LoadBalancer" else "<none>"


def _event_object(obj: Obj, now: dt.datetime) -> str:
    involved = obj.get("involvedObject") or {}
    return f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"


def _event_last_seen(obj: Obj, now: dt.datetime) -> str:
    when = obj.get("lastTimestamp") or obj.get("eventTime") or _get(
        obj, "metadata", "creationTimestamp")
    return _age_of(when, now)


def _event_source(obj: Obj, now: dt.datetime) -> str:
    source = obj.get("source") or {}
    text = source.get("component") or obj.get("reportingComponent") or ""
    return f"{text}, {source['host']}" if source.get("host") else text


def _data_count(obj: Obj, now: dt.datetime) -> int:
    return len(obj.get("data") or {}) + len(obj.get("binaryData") or {})


def _pdb_value(field: str) -> Callable[[Obj, dt.datetime], Any]:
    return lambda obj, now: _or_none(_get(obj, "spec", field)) if _get(
        obj, "spec", field) is not None else "N/A"


def _job_completions(obj: Obj, now: dt.datetime) -> str:
    wanted = _get(obj, "spec", "completions")
    done = int(_get(obj, "status", "succeeded") or 0)
    return f"{done}/{wanted if wanted is not None else 1}"


def _job_status(obj: Obj, now: dt.datetime) -> str:
    conditions = {c.get("type") for c in _get(obj, "status", "conditions") or []
                  if c.get("status") == "True"}
    for kind in ("Complete", "Failed", "Suspended"):
        if kind in conditions:
            return kind
    return "Running"


def _text(*path: str) -> Callable[[Obj, dt.datetime], Any]:
    return lambda obj, now: _or_none(_get(obj, *path))


NAME: Column = ("Name", "string", 0, _name)
AGE: Column = ("Age", "string", 0, _age)

_BUILTIN_COLUMNS: dict[str, list[Column]] = {
    "Pod": [
        NAME, ("Ready", "string", 0, _pod_ready), ("Status", "string", 0, _pod_status),
        ("Restarts", "string", 0, _pod_restarts), AGE,
        ("IP", "string", 1, _text("status", "podIP")),
        ("Node", "string", 1, _text("spec", "nodeName")),
        ("Nominated Node", "string", 1, _text("status", "nominatedNodeName")),
        ("Readiness Gates", "string", 1, lambda o, n: "<none>"),
    ],
    "Node": [
        NAME, ("Status", "string", 0, _node_status), ("Roles", "string", 0, _node_roles), AGE,
        ("Version", "string", 0, _text("status", "nodeInfo", "kubeletVersion")),
        ("Internal-IP", "string", 1, _node_address("InternalIP")),
        ("External-IP", "string", 1, _node_address("ExternalIP")),
        ("OS-Image", "string", 1, _text("status", "nodeInfo", "osImage")),
        ("Kernel-Version", "string", 1, _text("status", "nodeInfo", "kernelVersion")),
        ("Container-Runtime", "string", 1, _text("status", "nodeInfo", "containerRuntimeVersion")),
    ],
    "Namespace": [NAME, ("Status", "string", 0, _text("status", "phase")), AGE],
    "Deployment": [
        NAME,
        ("Ready", "string", 0, lambda o, n: f"{int(_get(o, 'status', 'readyReplicas') or 0)}/"
                                          f"{int(_get(o, 'spec', 'replicas') or 0)}"),
        ("Up-to-date", "integer", 0, _int("status", "updatedReplicas")),
        ("Available", "integer", 0, _int("status", "availableReplicas")), AGE,
        ("Containers", "string", 1, _containers), ("Images", "string", 1, _images),
        ("Selector", "string", 1, _selector),
    ],
    "ReplicaSet": [
        NAME, ("Desired", "integer", 0, _int("spec", "replicas")),
        ("Current", "integer", 0, _int("status", "replicas")),
        ("Ready", "integer", 0, _int("status", "readyReplicas")), AGE,
        ("Containers", "string", 1, _containers), ("Images", "string", 1, _images),
        ("Selector", "string", 1, _selector),
    ],
    "StatefulSet": [
        NAME,
        ("Ready", "string", 0, lambda o, n: f"{int(_get(o, 'status', 'readyReplicas') or 0)}/"
                                          f"{int(_get(o, 'spec', 'replicas') or 0)}"), AGE,
        ("Containers", "string", 1, _containers), ("Images", "string", 1, _images),
    ],
    "DaemonSet": [
        NAME, ("Desired", "integer", 0, _int("status", "desiredNumberScheduled")),
        ("Current", "integer", 0, _int("status", "currentNumberScheduled")),
        ("Ready", "integer", 0, _int("status", "numberReady")),
        ("Up-to-date", "integer", 0, _int("status", "updatedNumberScheduled")),
        ("Available", "integer", 0, _int("status", "numberAvailable")),
        ("Node Selector", "string", 0, lambda o, n: ",".join(
            f"{k}={v}" for k, v in sorted(
                (_get(o, "spec", "template", "spec", "nodeSelector") or {}).items())) or "<none>"),
        AGE, ("Containers", "string", 1, _containers), ("Images", "string", 1, _images),
        ("Selector", "string", 1, _selector),
    ],
    "Service": [
        NAME, ("Type", "string", 0, _text("spec", "type")),
        ("Cluster-IP", "string", 0, _text("spec", "clusterIP")),
        ("External-IP", "string", 0, _external_ip), ("Port(s)", "string", 0, _service_ports),
        AGE, ("Selector", "string", 1, _selector),
    ],
    "ConfigMap": [NAME, ("Data", "integer", 0, _data_count), AGE],
    "Secret": [NAME, ("Type", "string", 0, _text("type")), ("Data", "integer", 0, _data_count),
               AGE],
    "ServiceAccount": [NAME, ("Secrets", "integer", 0, lambda o, n: len(o.get("secrets") or [])),
                       AGE],
    "Job": [
        NAME, ("Status", "string", 0, _job_status),
        ("Completions", "string", 0, _job_completions),
        ("Duration", "string", 0, lambda o, n: "<none>"), AGE,
        ("Containers", "string", 1, _containers), ("Images", "string", 1, _images),
    ],
    "CronJob": [
        NAME, ("Schedule", "string", 0, _text("spec", "schedule")),
        ("Timezone", "string", 0, _text("spec", "timeZone")),
        ("Suspend", "boolean", 0, lambda o, n: bool(_get(o, "spec", "suspend"))),
        ("Active", "integer", 0, lambda o, n: len(_get(o, "status", "active") or [])),
        ("Last Schedule", "string", 0, lambda o, n: _age_of(
            _get(o, "status", "lastScheduleTime"), n) if _get(o, "status", "lastScheduleTime")
            else "<none>"),
        AGE,
    ],
    "PodDisruptionBudget": [
        NAME, ("Min Available", "string", 0, _pdb_value("minAvailable")),
        ("Max Unavailable", "string", 0, _pdb_value("maxUnavailable")),
        ("Allowed Disruptions", "integer", 0, _int("status", "disruptionsAllowed")), AGE,
    ],
    "Event": [
        ("Last Seen", "string", 0, _event_last_seen), ("Type", "string", 0, _text("type")),
        ("Reason", "string", 0, _text("reason")), ("Object", "string", 0, _event_object),
        ("Subobject", "string", 1, _text("involvedObject", "fieldPath")),
        ("Source", "string", 1, _event_source), ("Message", "string", 0, _text("message")),
        ("First Seen", "string", 1, lambda o, n: _age_of(o.get("firstTimestamp"), n)),
        ("Count", "string", 1, lambda o, n: o.get("count") or 1), ("Name", "string", 1, _name),
    ],
    "StorageClass": [
        NAME, ("Provisioner", "string", 0, _text("provisioner")),
        ("ReclaimPolicy", "string", 0, lambda o, n: o.get("reclaimPolicy") or "Delete"),
        ("VolumeBindingMode", "string", 0,
         lambda o, n: o.get("volumeBindingMode") or "Immediate"),
        ("AllowVolumeExpansion", "string", 0,
         lambda o, n: bool(o.get("allowVolumeExpansion"))), AGE,
    ],
    "PriorityClass": [
        NAME, ("Value", "integer", 0, lambda o, n: int(o.get("value") or 0)),
        ("Global-Default", "boolean", 0, lambda o, n: bool(o.get("globalDefault"))), AGE,
        ("PreemptionPolicy", "string", 0,
         lambda o, n: o.get("preemptionPolicy") or "PreemptLowerPriority"),
    ],
    "RoleBinding": [
        NAME, ("Role", "string", 0, lambda o, n: f"{_get(o, 'roleRef', 'kind')}/"
                                                  f"{_get(o, 'roleRef', 'name')}"), AGE,
    ],
    "ClusterRoleBinding": [
        NAME, ("Role", "string", 0, lambda o, n: f"{_get(o, 'roleRef', 'kind')}/"
                                                  f"{_get(o, 'roleRef', 'name')}"), AGE,
    ],
    "Endpoints": [
        NAME, ("Endpoints", "string", 0, lambda o, n: ",".join(
            f"{a.get('ip')}:{p.get('port')}" for s in o.get("subsets") or []
            for a in s.get("addresses") or [] for p in s.get("ports") or []) or "<none>"), AGE,
    ],
}
#: Kinds the server prints with Name and Created At only.
_CREATED_AT: Column = (
    "Created At", "date", 0, lambda o, n: _get(o, "metadata", "creationTimestamp") or ""
)


def _jsonpath(obj: Obj, path: str) -> Any:
    """A simple JSONPath (`.spec.replicas`, `.status.conditions[0].type`)."""
    current: Any = obj
    for part in re.findall(r"\.([^.\[\]]+)|\[(\d+)\]", path.strip().strip("{}")):
        key, index = part
        if key:
            current = current.get(key) if isinstance(current, dict) else None
        else:
            position = int(index)
            ok = isinstance(current, list) and position < len(current)
            current = current[position] if ok else None
        if current is None:
            return None
    return current


def _crd_column(column: dict[str, Any]) -> Column:
    kind = column.get("type", "string")
    path = str(column.get("jsonPath", ""))

    def cell(obj: Obj, now: dt.datetime) -> Any:
        value = _jsonpath(obj, path)
        if kind == "date":
            return _age_of(value, now) if value else "<unknown>"
        return value

    return (column.get("name", ""), kind if kind != "date" else "date", int(
        column.get("priority", 0) or 0), cell)


def columns(rtype: ResourceType) -> list[Column]:
    if not rtype.builtin:
        extra = [_crd_column(c) for c in rtype.printer_columns]
        return [NAME, *extra] if extra else [NAME, AGE]
    if rtype.kind in _BUILTIN_COLUMNS:
        return _BUILTIN_COLUMNS[rtype.kind]
    return [NAME, _CREATED_AT]


def _definition(column: Column) -> dict[str, Any]:
    name, kind, priority, _ = column
    fmt = "name" if name == "Name" else ""
    return {"name": name, "type": "string" if kind == "date" else kind, "format": fmt,
            "description": name, "priority": priority}


def _row(rtype: ResourceType, obj: Obj, cols: list[Column], include: str,
         now: dt.datetime) -> dict[str, Any]:
    cells = []
    for *_, cell in cols:
        value = cell(obj, now)
        cells.append(value if value is not None else "<none>")
    row: dict[str, Any] = {"cells": cells}
    if include == "Object":
        row["object"] = obj
    elif include == "Metadata":
        row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                         "metadata": obj.get("metadata") or {}}
    return row


def table(rtype: ResourceType, objects: list[Obj], *, accept: str, query: dict[str, str],
          list_metadata: dict[str, Any] | None = None, now: dt.datetime | None = None,
          ) -> dict[str, Any]:
    """A `Table` of `objects` (already presented, kind and apiVersion set)."""
    include = query.get("includeObject") or "Metadata"
    if include not in ("None", "Metadata", "Object"):
        raise bad_request(f'includeObject must be None, Metadata or Object, not "{include}"')
    now = now or dt.datetime.now(dt.UTC)
    cols = columns(rtype)
    body: dict[str, Any] = {
        "kind": "Table",
        "apiVersion": _api_version(accept),
        "metadata": dict(list_metadata or {}),
        "columnDefinitions": [_definition(c) for c in cols],
        "rows": [_row(rtype, obj, cols, include, now) for obj in objects],
    }
    return body
