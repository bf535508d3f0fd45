"""Watch: `GET <collection>?watch=1` streams the changes of a resource as JSON lines.

As the API server does it:
- without `resourceVersion` (or with "0") the watch starts with an ADDED event per existing
  object, then follows changes; with a resourceVersion it replays the changes after it, or, if
  the store no longer remembers that far back, ends with an ERROR event carrying a 410 Gone;
- label and field selectors filter events (by the object after the change);
- `timeoutSeconds` ends the stream; `allowWatchBookmarks` adds a BOOKMARK every few seconds;
- `sendInitialEvents=true` (a "watch list") sends the current objects, then a BOOKMARK
  annotated `k8s.io/initial-events-end`;
- DELETED events carry the object as it was, with the resourceVersion of its deletion.

The stream is a generator run by the HTTP handler's thread, outside the request lock; it takes
the store's lock only to read changes, and ends when the server stops.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from clmgit_sandbox.kubeapi.cluster import Cluster
from clmgit_sandbox.kubeapi.errors import APIError
from clmgit_sandbox.kubeapi.resources import ResourceType
from clmgit_sandbox.kubeapi.selectors import (
    matches_fields,
    matches_labels,
    parse_field_selector,
    parse_label_selector,
)
from clmgit_sandbox.kubeapi.store import Obj

#: A watch without timeoutSeconds ends after this long (the server picks 30 to 60 minutes).
DEFAULT_TIMEOUT = 1800.0
BOOKMARK_EVERY = 5.0

Render = Callable[[ResourceType, Obj], Any]


def _line(kind: str, obj: Any) -> bytes:
    return json.dumps({"type": kind, "object": obj}).encode() + b"\n"


def stream(
    cluster: Cluster,
    rtype: ResourceType,
    namespace: str | None,
    query: dict[str, str],
    render: Render,
) -> Iterator[bytes]:
    """Check the request now (bad selectors fail before the stream starts); then stream."""
    labels = parse_label_selector(query.get("labelSelector"))
    fields = parse_field_selector(query.get("fieldSelector"), rtype.kind, rtype.builtin)
    try:
        timeout = float(query.get("timeoutSeconds") or DEFAULT_TIMEOUT)
    except ValueError as e:
        raise APIError(400, "BadRequest", "timeoutSeconds must be a number") from e
    since = query.get("resourceVersion") or "0"
    if not since.isdigit():
        raise APIError(400, "BadRequest", f'invalid resource version "{since}"')
    bookmarks = query.get("allowWatchBookmarks", "").lower() in ("1", "true")
    # A watch list (client-go ≥ 1.32 by default): the current state as ADDED events, then a
    # BOOKMARK annotated as the end of the initial events, whatever resourceVersion says.
    initial_list = query.get("sendInitialEvents", "").lower() in ("1", "true")
    if initial_list:
        since = "0"

    def wanted(obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        if namespace is not None and meta.get("namespace", "") != namespace:
            return False
        return matches_labels(labels, obj) and matches_fields(fields, obj)

    def events() -> Iterator[bytes]:
        store = cluster.store
        deadline = time.monotonic() + timeout
        with store.lock:
            if since == "0":
                position = store.revision
                initial = [obj for obj in store.list_objects(rtype.key, namespace) if wanted(obj)]
                lines = [_line("ADDED", render(rtype, obj)) for obj in initial]
                if initial_list:
                    end = {"apiVersion": rtype.api_version, "kind": rtype.kind,
                           "metadata": {"resourceVersion": str(position), "annotations": {
                               "k8s.io/initial-events-end": "true"}}}
                    lines.append(_line("BOOKMARK", end))
            else:
                position = int(since)
                oldest = store.history[0].revision if store.history else store.revision + 1
                if position < oldest - 1 and position < store.revision:
                    gone = APIError(410, "Expired", f"too old resource version: {position} "
                                    f"({oldest - 1})")
                    lines, deadline = [_line("ERROR", gone.body())], 0.0
                else:
                    lines = []
        yield from lines
        last_bookmark = time.monotonic()
        while time.monotonic() < deadline:
            with store.changed:
                if store.closed:
                    return
                pending = [c for c in store.history if c.revision > position]
                if not pending:
                    store.changed.wait(timeout=min(1.0, max(0.0, deadline - time.monotonic())))
                    pending = [c for c in store.history if c.revision > position]
                lines = []
                for change in pending:
                    position = max(position, change.revision)
                    if change.key == rtype.key and wanted(change.obj):
                        lines.append(_line(change.type, render(rtype, change.obj)))
                if bookmarks and time.monotonic() - last_bookmark > BOOKMARK_EVERY:
                    last_bookmark = time.monotonic()
                    mark = {"apiVersion": rtype.api_version, "kind": rtype.kind,
                            "metadata": {"resourceVersion": str(store.revision)}}
                    lines.append(_line("BOOKMARK", mark))
            yield from lines

    return events()
