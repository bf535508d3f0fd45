"""Notifications: the events of `clmgit.events` a team asked for, sent through the `apprise`
library (Slack, Teams, e-mail, a webhook, ...) by whichever process saw them, the CLI in CI or
the controller. Asked for in `clmgit.yaml` on the control branch:

    notify:
      - url: ${CLMGIT_SLACK_URL}   # an apprise URL; ${VAR} read from the environment
        events: [promotion.landed, reconcile.failed]
        channels: [beta, stable]   # optional: only events of these channels

A notification is never a failure and never a delay past its bound: each is sent on a thread
of its own, a target that fails or is slow is a warning, and a command waits for unsent ones at
most `CLMGIT_NOTIFY_TIMEOUT` seconds (default 10) when it ends. URLs carry tokens: they are
never shown, only their scheme (`slack://***`).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clmgit.errors import ClmgitError, ConfigError
from clmgit.events import CLUSTER_RESULT, NOTIFIABLE, RECONCILE_FAILED, Event

log = logging.getLogger(__name__)

TIMEOUT_ENV = "CLMGIT_NOTIFY_TIMEOUT"
DEFAULT_TIMEOUT = 10.0
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FIELDS = ("url", "events", "channels")


@dataclass(frozen=True)
class Target:
    """One `notify:` entry: its URL as written (variables not yet read), what it hears."""

    url: str
    events: frozenset[str]
    #: None: every channel's events. Events of no channel (reconcile.stuck) pass any filter.
    channels: frozenset[str] | None = None

    @property
    def shown(self) -> str:
        """The URL as messages show it: its scheme only."""
        scheme, sep, _ = self.url.partition("://")
        return f"{scheme}://***" if sep and not scheme.startswith("$") else "***"

    def wants(self, event: Event) -> bool:
        if event.name not in self.events:
            return False
        return self.channels is None or not event.channel or event.channel in self.channels

    def resolved(self, environ: Mapping[str, str]) -> str:
        """The URL with its `${VAR}`s read; `ConfigError` naming a variable that is not set."""
        missing = [name for name in _VARIABLE.findall(self.url) if not environ.get(name)]
        if missing:
            raise ConfigError(f"the notify target {self.shown} needs the environment variable "
                              f"{missing[0]}, which is not set")
        return _VARIABLE.sub(lambda m: environ[m.group(1)], self.url)


def parse_notify(raw: Any, where: str) -> tuple[Target, ...]:
    """The `notify:` key of clmgit.yaml (None: no notifications); one sentence if malformed."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: key 'notify' must be a list of targets, each with a url "
                          "and events")
    return tuple(_target(item, i + 1, where) for i, item in enumerate(raw))


def _target(item: Any, number: int, where: str) -> Target:
    what = f"{where}: notify target #{number}"
    if not isinstance(item, Mapping):
        raise ConfigError(f"{what} must be a mapping with a url and events")
    unknown = sorted(str(k) for k in item if k not in _FIELDS)
    if unknown:
        raise ConfigError(f"{what} has unknown key {unknown[0]!r} (known keys: "
                          f"{', '.join(_FIELDS)})")
    url = item.get("url")
    if not isinstance(url, str) or "://" not in url and not _VARIABLE.fullmatch(url.strip()):
        raise ConfigError(f"{what} needs a url: an apprise URL such as slack://... or "
                          "${VARIABLE}")
    names = _words(item.get("events"), f"{what}: events")
    if not names:
        raise ConfigError(f"{what} needs events, some of: {', '.join(NOTIFIABLE)}")
    unknown_events = [n for n in names if n not in NOTIFIABLE]
    if unknown_events:
        raise ConfigError(f"{what}: unknown event {unknown_events[0]!r} (events: "
                          f"{', '.join(NOTIFIABLE)})")
    channels = None
    if item.get("channels") is not None:
        channels = frozenset(_words(item["channels"], f"{what}: channels"))
    return Target(url.strip(), frozenset(names), channels)


def _words(raw: Any, what: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(w, str) and w for w in raw):
        raise ConfigError(f"{what} must be a list of names")
    return list(raw)


def timeout() -> float:
    """`CLMGIT_NOTIFY_TIMEOUT`: the seconds a notification may take (default 10)."""
    value = os.environ.get(TIMEOUT_ENV, "")
    try:
        seconds = float(value) if value else DEFAULT_TIMEOUT
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= 300:
        raise ConfigError(f"{TIMEOUT_ENV}={value!r} must be a number of seconds from 0 to 300")
    return seconds


Send = Callable[[str, Event], bool]


def apprise_send(url: str, event: Event) -> bool:
    """Send `event` to one apprise URL; whether apprise says it was delivered."""
    import apprise

    notifier = apprise.Apprise()
    if not notifier.add(url):
        raise ConfigError("apprise does not know this URL's service")
    from clmgit.redact import LogRedactor, environment_secrets

    title = f"clmgit: {event.name}" + (f" ({event.cluster})" if event.cluster else "")
    # Credentials hidden, as in logs: an error's text may quote one.
    body = LogRedactor(environment_secrets()).hide(event.message or event.name)
    return bool(notifier.notify(body=body, title=title))


class Notifier:
    """A `clmgit.events` listener that sends what `targets()` ask for. `targets` is read at
    each notifiable event (a command that notifies nothing never reads it; a controller reads
    the clmgit.yaml of its round)."""

    def __init__(self, targets: Callable[[], Sequence[Target]], *, send: Send = apprise_send,
                 environ: Mapping[str, str] | None = None, bound: float | None = None) -> None:
        self._targets = targets
        self._send = send
        self._environ = os.environ if environ is None else environ
        self._bound = bound
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        #: The failure last told per cluster: a controller tells a cluster that fails the same
        #: way round after round once, and again when it fails otherwise or after it recovered.
        self._failing: dict[str, str] = {}

    def __call__(self, event: Event) -> None:
        if self._repeated(event) or event.name not in NOTIFIABLE:
            return
        for target in self._wanted(event):
            thread = threading.Thread(target=self._deliver, args=(target, event),
                                      name="notify", daemon=True)
            with self._lock:
                self._threads = [t for t in self._threads if t.is_alive()]
                self._threads.append(thread)
            thread.start()

    def _repeated(self, event: Event) -> bool:
        with self._lock:
            if event.name == CLUSTER_RESULT and event.fields.get("outcome") != "failed":
                self._failing.pop(event.cluster, None)
            if event.name != RECONCILE_FAILED:
                return False
            told, self._failing[event.cluster] = self._failing.get(event.cluster), event.message
            return told == event.message

    def _wanted(self, event: Event) -> list[Target]:
        try:
            targets = self._targets()
        except ClmgitError as e:
            log.warning("no notification of %s: %s", event.name, e)
            return []
        return [t for t in targets if t.wants(event)]

    def _deliver(self, target: Target, event: Event) -> None:
        try:
            delivered = self._send(target.resolved(self._environ), event)
        except ConfigError as e:
            log.warning("cannot notify %s of %s: %s", target.shown, event.name, e)
            return
        except Exception as e:  # noqa: BLE001 - a notification is never a failure
            log.warning("cannot notify %s of %s: %s", target.shown, event.name,
                        type(e).__name__)
            return
        if not delivered:
            log.warning("cannot notify %s of %s: the target did not accept it", target.shown,
                        event.name)

    def flush(self) -> None:
        """Wait for the notifications under way, at most the bound in all; those still going
        then are given up (a warning each)."""
        bound = self._bound if self._bound is not None else timeout()
        deadline = time.monotonic() + bound
        with self._lock:
            threads, self._threads = self._threads, []
        late = 0
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            late += thread.is_alive()
        if late:
            log.warning("%d notification(s) not sent within %gs (%s); given up", late, bound,
                        TIMEOUT_ENV)
