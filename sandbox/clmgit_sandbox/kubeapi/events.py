"""Events (core/v1) for what the sandbox simulates, as the components that would write them.

`record()` stores an Event about an object — written straight into the store, as kubelet, the
scheduler or a controller would through their own clients. A repeat of the same reason and
message about the same object bumps `count` and `lastTimestamp` instead of adding an Event, as
the client-go event recorder does. `kubectl describe` and `kubectl events` read them back.
"""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from clmgit_sandbox.kubeapi.cluster import Cluster
from clmgit_sandbox.kubeapi.store import Obj

EVENTS = ("", "events")


def record(cluster: Cluster, about: Obj, reason: str, message: str, *,
           component: str, kind: str = "Normal", host: str = "") -> None:
    """An Event about `about` (a presented object: apiVersion, kind, metadata)."""
    meta = about.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    involved = {
        "apiVersion": about.get("apiVersion", ""), "kind": about.get("kind", ""),
        "name": meta.get("name", ""), "namespace": meta.get("namespace", ""),
        "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", ""),
    }
    now = cluster.now()
    with cluster.store.lock:
        if cluster.store.get(("", "namespaces"), "", namespace) is None:
            return  # nowhere to write it (a cluster-scoped object's events go to default)
        for existing in cluster.store.list_objects(EVENTS, namespace):
            same = existing.get("involvedObject", {}).get("uid") == involved["uid"]
            if same and existing.get("reason") == reason and existing.get("message") == message:
                existing["count"] = int(existing.get("count") or 1) + 1
                existing["lastTimestamp"] = now
                cluster.store.put(EVENTS, existing)
                return
        source: dict[str, Any] = {"component": component}
        if host:
            source["host"] = host
        event = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {
                "name": f"{involved['name']}.{secrets.token_hex(8)}", "namespace": namespace,
                "uid": str(uuid.uuid4()), "creationTimestamp": now,
            },
            "involvedObject": involved, "reason": reason, "message": message,
            "source": source, "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "type": kind, "reportingComponent": component, "reportingInstance": host,
        }
        cluster.store.put(EVENTS, event)
