"""The controller as a service: what its rounds tell Kubernetes (liveness, readiness) and
Prometheus (`clmgit.metrics`), and the `reconcile.stuck` event of a round that runs too long.

Live: the process works, and the round under way started less than twice the interval ago
(a round longer than that is stuck). Ready: the last round reached the registry and the config
repo (a round that could not run, such as on an unreachable registry, leaves it not ready;
clusters that failed do not).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from clmgit import events
from clmgit.endpoints import endpoints_app, serve_endpoints
from clmgit.httpd import Background
from clmgit.metrics import ControllerMetrics


class RoundWatch:
    """Follows the controller's rounds: `started` before each, `finished` after it."""

    def __init__(self, *, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        #: A round is stuck past this many seconds.
        self.stuck_after = 2 * interval
        self.metrics = ControllerMetrics()
        self.metrics.interval.set(interval)
        self._clock = clock
        self._lock = threading.Lock()
        self._started: float | None = None
        self._round = 0
        self._ready: str | None = "no round has finished yet"
        self._timer: threading.Timer | None = None

    def started(self) -> None:
        with self._lock:
            self._started = self._clock()
            self._round += 1
            self._cancel()
            self.metrics.round_started()
            self._timer = threading.Timer(self.stuck_after, self._stuck, args=(self._round,))
            self._timer.daemon = True
            self._timer.start()

    def finished(self, error: Exception | None,
                 clusters: Iterable[tuple[str, str]] | None = None) -> None:
        """The round ended: `error` if it could not run; the (state, channel) of its clusters."""
        with self._lock:
            started, self._started = self._started, None
            self._cancel()
            self._ready = None if error is None else f"the last round failed: {error}"
        seconds = 0.0 if started is None else self._clock() - started
        self.metrics.round_finished(seconds=seconds, ok=error is None)
        if clusters is not None:
            self.metrics.cluster_states(clusters)

    def live(self) -> str | None:
        with self._lock:
            started = self._started
        if started is not None and self._clock() - started > self.stuck_after:
            return (f"the round under way started {self._clock() - started:.0f}s ago, more "
                    f"than twice the interval ({self.stuck_after:.0f}s)")
        return None

    def ready(self) -> str | None:
        with self._lock:
            return self._ready

    def serve(self, *, address: str, port: int) -> Background:
        """/healthz, /readyz and /metrics on `address:port`."""
        app = endpoints_app(live=self.live, ready=self.ready, registry=self.metrics.registry)
        return serve_endpoints(app, address=address, port=port)

    def _stuck(self, number: int) -> None:
        with self._lock:
            if number != self._round or self._started is None:
                return
        events.emit(events.RECONCILE_STUCK, f"the controller's round has run for more than "
                    f"{self.stuck_after:g}s (twice the interval)")

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
