"""The one place where clmgit says what happened, for whoever listens: the metrics of a
running controller or registry (`clmgit.metrics`), notifications (`clmgit.notify`). Code that
sees something happen calls `emit`; it knows nothing of who hears it, and with no listener an
event costs a function call.

Events emitted in the engine's forked worker processes reach the listeners of the parent: the
run's event forwarder (`clmgit.reconcile.workers.forwarded_events`) hands `forward_from_children`
its queue's `put`, and `deliver` is called with what arrives.

The names users see (the `events:` of `notify:` in clmgit.yaml) are `NOTIFIABLE`; the others
feed the metrics only.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

# Events a user may be told of (`notify:` in clmgit.yaml).
PROMOTION_LANDED = "promotion.landed"
PROMOTION_REFUSED = "promotion.refused"
PROMOTION_FORCED = "promotion.forced"
RECONCILE_FAILED = "reconcile.failed"
RECONCILE_STUCK = "reconcile.stuck"
HEALTH_FAILED = "health.failed"
WINDOW_BYPASSED = "window.bypassed"
LEASE_TAKEN_OVER = "lease.taken_over"
NOTIFIABLE = (PROMOTION_LANDED, PROMOTION_REFUSED, PROMOTION_FORCED, RECONCILE_FAILED,
              RECONCILE_STUCK, HEALTH_FAILED, WINDOW_BYPASSED, LEASE_TAKEN_OVER)

# Events for the metrics only.
CLUSTER_RESULT = "cluster.result"  # fields: outcome (in-sync, applied, failed, ...)
STEP_FAILED = "step.failed"  # fields: step (stacks, node_pools, manifests, deletions)
NODES_REPLACED = "nodes.replaced"  # fields: count
LEASE = "lease"  # fields: event (acquired, lost, taken_over)
RETRY = "retry"  # fields: target (aws, kubernetes, registry)
HEALTH_VERDICT = "health.verdict"  # fields: state


@dataclass(frozen=True)
class Event:
    """Something that happened: its name, one sentence for people, and where, when known."""

    name: str
    message: str = ""
    cluster: str = ""
    channel: str = ""
    fields: Mapping[str, str] = field(default_factory=dict)


Listener = Callable[[Event], None]

_listeners: list[Listener] = []
_lock = threading.Lock()
#: (the pid of the process whose listeners hear events, where a forked child sends them).
_children: tuple[int, Callable[[Event], None]] | None = None


def emit(name: str, message: str = "", *, cluster: str = "", channel: str = "",
         **fields: str | int) -> None:
    """Tell every listener that `name` happened; never raises."""
    event = Event(name, message, cluster, channel, {k: str(v) for k, v in fields.items()})
    children = _children
    if children is not None and os.getpid() != children[0]:
        try:
            children[1](event)
        except Exception:  # an event must never fail the work that emits it
            log.debug("cannot forward event %s to the parent", name, exc_info=True)
        return
    deliver(event)


def deliver(event: Event) -> None:
    """Hand `event` to this process's listeners (a listener's error is logged, not raised),
    and log it: at info level the events users may be told of, at debug level the others,
    naming the cluster and step (`--log-format json` writes them as fields)."""
    level = logging.INFO if event.name in NOTIFIABLE else logging.DEBUG
    if log.isEnabledFor(level):
        log.log(level, "%s", event.message or f"{event.name} {dict(event.fields)}",
                extra={"event": event.name, "cluster": event.cluster or None,
                       "channel": event.channel or None, "step": event.fields.get("step")})
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(event)
        except Exception:  # one listener's bug must not fail the run
            log.warning("a listener of %s failed", event.name, exc_info=True)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """`listener` hears every event emitted in this process while the block runs."""
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


@contextmanager
def forward_from_children(send: Callable[[Event], None]) -> Iterator[None]:
    """While the block runs, events emitted in processes forked from this one go to `send`."""
    global _children
    previous, _children = _children, (os.getpid(), send)
    try:
        yield
    finally:
        _children = previous


@contextmanager
def failing_step(step: str, *, cluster: str) -> Iterator[None]:
    """Emit `step.failed` for `step` if the block raises (the error goes on)."""
    try:
        yield
    except Exception:
        emit(STEP_FAILED, cluster=cluster, step=step)
        raise
