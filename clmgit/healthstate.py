"""Health verdicts (docs/how-to/health-gate.md): the states, the `healthy_in_source` gate of a
channel file, and how a recorded verdict is judged at a moment.

A verdict (`model.Health`, kept in `status.health`) is bound to the version the cluster ran when
it was observed, and counts only if it was observed after that version's `applied_at`: a value
read before the apply (a "stale green") or for other content is no verdict at all. Past the
progress deadline after `applied_at`, a cluster that is not healthy is `failed` — never pending
for ever. `unknown` (unreachable, no data) is never healthy, and stays `unknown` past the deadline:
the gate's `allow_unknown` decides about it.

States:
- healthy: every check passed; `healthy_since` is when it last became so (a flap restarts it);
- pending: applied, not judged yet, or still converging (a rollout, a node being replaced),
  within its deadline;
- unhealthy: a check failed (a crash loop, a node NotReady, a stack rolled back), within its
  deadline;
- failed: past the deadline without being healthy, or unhealthy after it;
- unknown: the cluster or the cloud could not be read.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote, urlsplit, urlunsplit

from clmgit.durations import format_duration, parse_duration
from clmgit.errors import ConfigError
from clmgit.model import ClusterStatus, Health
from clmgit.timestamps import format_timestamp, parse_timestamp

if TYPE_CHECKING:
    from clmgit.model import Cluster


class Promoted(Protocol):
    """A channel as the health gate sees it (`clmgit.channels.Channel`)."""

    @property
    def source(self) -> str | None: ...

    @property
    def health_gate(self) -> HealthGate | None: ...

HEALTHY = "healthy"
PENDING = "pending"
UNHEALTHY = "unhealthy"
FAILED = "failed"
UNKNOWN = "unknown"
STATES = (HEALTHY, PENDING, UNHEALTHY, FAILED, UNKNOWN)

DEFAULT_DEADLINE = timedelta(minutes=30)
DEFAULT_TIMEOUT = 10.0
#: At most this many reasons are kept in a verdict (each one line).
MAX_REASONS = 20
CHECK_KINDS = ("http", "prometheus", "job")
#: What an HTTP check does with a redirect: follow it within the origin it names, or never.
REDIRECTS = ("same-origin", "none")
_FIELD = re.compile(r"\{(id|alias|region|environment|local_id)\}")
_HOST_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


@dataclass(frozen=True)
class Check:
    """An optional check of the gate: an HTTP GET answering 2xx, a Prometheus query that is
    non-empty and true, or a Kubernetes Job that succeeded. URLs may name the cluster's fields
    as `{id}`, `{alias}`, `{region}`, `{environment}`, `{local_id}`."""

    kind: str
    url: str = ""
    query: str = ""
    namespace: str = ""
    name: str = ""
    timeout: float = DEFAULT_TIMEOUT

    def describe(self) -> str:
        if self.kind == "job":
            return f"job {self.namespace}/{self.name}"
        if self.kind == "prometheus":
            return f"prometheus query {self.query!r}"
        return f"http {self.url}"

    def url_for(self, cluster: Cluster) -> str:
        """The URL with the cluster's fields put in: in the host each must be a host name
        label (a record cannot move a check to another host); elsewhere it is percent-encoded
        as one path segment or query value. A field that cannot be put in is a ConfigError."""
        fields = {"id": cluster.id, "alias": cluster.alias, "region": cluster.region,
                  "environment": cluster.environment, "local_id": cluster.local_id}

        def host_label(match: re.Match[str]) -> str:
            value = fields[match.group(1)]
            if not _HOST_LABEL.fullmatch(value):
                raise ConfigError(f"the cluster's {match.group(1)} {value!r} is not a host name "
                                  f"label, so it cannot name the host of {self.url}")
            return value.lower()

        def encoded(match: re.Match[str]) -> str:
            return quote(fields[match.group(1)], safe="")

        parts = urlsplit(self.url)
        return urlunsplit((parts.scheme, _FIELD.sub(host_label, parts.netloc),
                           _FIELD.sub(encoded, parts.path), _FIELD.sub(encoded, parts.query),
                           ""))


@dataclass(frozen=True)
class HealthPolicy:
    """`health_checks:` of `clmgit.yaml`: where the HTTP checks of the health gate may go."""

    #: Host names (`*` and `?` as in shell patterns) checks may ask; empty: any.
    hosts: tuple[str, ...] = ()
    #: `same-origin`: redirects within a check's scheme, host and port are followed; `none`.
    redirects: str = "same-origin"

    def allows(self, host: str) -> bool:
        return not self.hosts or any(fnmatch.fnmatchcase(host.lower(), pattern.lower())
                                     for pattern in self.hosts)


def parse_policy(raw: Any, where: str) -> HealthPolicy:
    """The `health_checks:` mapping (`hosts`, `redirects`); the defaults when it is missing."""
    if raw is None:
        return HealthPolicy()
    if not isinstance(raw, Mapping) or set(map(str, raw)) - {"hosts", "redirects"}:
        raise ConfigError(f"{where}: key 'health_checks' must be a mapping of hosts (a list "
                          "of host names) and redirects (same-origin or none)")
    hosts = raw.get("hosts") or []
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h for h in hosts):
        raise ConfigError(f"{where}: health_checks.hosts must be a list of host names such as "
                          "'*.health.example.org'")
    redirects = raw.get("redirects", "same-origin")
    if redirects not in REDIRECTS:
        raise ConfigError(f"{where}: health_checks.redirects must be same-origin or none, "
                          f"not {redirects!r}")
    return HealthPolicy(tuple(hosts), redirects)


@dataclass(frozen=True)
class HealthGate:
    """`gates.healthy_in_source` of a channel file."""

    stable_for: timedelta = timedelta(0)
    progress_deadline: timedelta = DEFAULT_DEADLINE
    allow_unknown: int = 0
    checks: tuple[Check, ...] = ()
    #: Namespaces whose workloads are judged; empty: those the cluster's manifests touch.
    namespaces: tuple[str, ...] = ()


GATE_KEYS = frozenset({"stable_for", "progress_deadline", "allow_unknown", "checks",
                       "namespaces"})


def parse_gate(raw: Any, where: str) -> HealthGate | None:
    """`gates.healthy_in_source`: `true` (the defaults), a mapping, or false/missing (None)."""
    where = f"{where}: gates.healthy_in_source"
    if raw is None or raw is False:
        return None
    if raw is True:
        return HealthGate()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be true or a mapping")
    unknown = sorted(set(map(str, raw)) - GATE_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (keys: "
                          f"{', '.join(sorted(GATE_KEYS))})")
    allow = raw.get("allow_unknown", 0)
    if not isinstance(allow, int) or isinstance(allow, bool) or allow < 0:
        raise ConfigError(f"{where}.allow_unknown must be a whole number >= 0, not {allow!r}")
    namespaces = raw.get("namespaces") or []
    if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
        raise ConfigError(f"{where}.namespaces must be a list of names")
    checks = raw.get("checks") or []
    if not isinstance(checks, list):
        raise ConfigError(f"{where}.checks must be a list")
    return HealthGate(
        stable_for=_duration(raw, "stable_for", where, timedelta(0)),
        progress_deadline=_duration(raw, "progress_deadline", where, DEFAULT_DEADLINE),
        allow_unknown=allow,
        checks=tuple(_check(c, f"{where}.checks[{i}]") for i, c in enumerate(checks)),
        namespaces=tuple(namespaces),
    )


def _duration(raw: Mapping[str, Any], key: str, where: str, default: timedelta) -> timedelta:
    value = raw.get(key)
    return default if value is None else parse_duration(value, where=f"{where}.{key}")


def _check(raw: Any, where: str) -> Check:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a mapping such as {{http: URL}}")
    kinds = [k for k in CHECK_KINDS if k in raw]
    extra = sorted(set(map(str, raw)) - {*CHECK_KINDS, "timeout"})
    if len(kinds) != 1 or extra:
        raise ConfigError(f"{where} must have exactly one of http, prometheus, job "
                          "(and optionally timeout)")
    kind, value = kinds[0], raw[kinds[0]]
    timeout = parse_duration(raw.get("timeout", 10), where=f"{where}.timeout").total_seconds()
    if timeout <= 0:
        raise ConfigError(f"{where}.timeout must be longer than 0s")
    if kind == "http":
        return Check("http", url=_check_url(value, f"{where}.http"), timeout=timeout)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}.{kind} must be a mapping")
    if kind == "prometheus":
        url, query = value.get("url"), value.get("query")
        if not isinstance(url, str) or not isinstance(query, str) or not query:
            raise ConfigError(f"{where}.prometheus needs url and query")
        url = _check_url(url, f"{where}.prometheus.url")
        return Check("prometheus", url=url, query=query, timeout=timeout)
    namespace, name = value.get("namespace"), value.get("name")
    if not isinstance(namespace, str) or not isinstance(name, str) or not name:
        raise ConfigError(f"{where}.job needs namespace and name")
    return Check("job", namespace=namespace, name=name, timeout=timeout)


def _check_url(value: Any, where: str) -> str:
    """An http(s) URL with a host (cluster fields in braces are put in later)."""
    ok = (isinstance(value, str) and value.startswith(("http://", "https://"))
          and value.isprintable())
    try:
        ok = ok and bool(urlsplit(value).hostname)
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(f"{where} must be an http(s) URL with a host, not {value!r}")
    return str(value)


# --- the gate that governs a cluster ---------------------------------------------------------


@dataclass(frozen=True)
class ClusterGate:
    """What judges a cluster's health: the gates of the channels promoted from its channel
    merged (the tightest deadline, every check and namespace); the defaults if there is none."""

    progress_deadline: timedelta = DEFAULT_DEADLINE
    checks: tuple[Check, ...] = ()
    namespaces: tuple[str, ...] = ()


def gate_for(channels: Iterable[Promoted], channel: str) -> ClusterGate:
    found = [ch.health_gate for ch in channels
             if ch.source == channel and ch.health_gate is not None]
    if not found:
        return ClusterGate()
    return ClusterGate(
        progress_deadline=min(g.progress_deadline for g in found),
        checks=tuple(dict.fromkeys(c for g in found for c in g.checks)),
        namespaces=tuple(dict.fromkeys(n for g in found for n in g.namespaces)),
    )


# --- judging a recorded verdict ----------------------------------------------------------------


@dataclass(frozen=True)
class Judgement:
    """A cluster's health now: its state, why (one line each), and since when it has held
    (`since`: healthy_since for healthy, else when observed; "" when never observed)."""

    state: str
    reasons: tuple[str, ...] = ()
    since: str = ""
    observed_at: str = ""
    verdict: Health | None = None  # the verdict the judgement rests on, if one counts

    @property
    def first_reason(self) -> str:
        return self.reasons[0] if self.reasons else ""


def valid_verdict(status: ClusterStatus) -> Health | None:
    """The recorded verdict if it speaks of what the cluster runs now: observed on its
    `current_version`, after `applied_at`. Anything else is stale."""
    health = status.health
    if health is None or not status.current_version or health.version != status.current_version:
        return None
    applied = parse_timestamp(status.applied_at)
    observed = parse_timestamp(health.observed_at)
    if observed is None or (applied is not None and observed < applied):
        return None
    return health


def past_deadline(status: ClusterStatus, deadline: timedelta, now: datetime) -> bool:
    applied = parse_timestamp(status.applied_at)
    return applied is not None and now > applied + deadline


def judge(status: ClusterStatus, *, deadline: timedelta, now: datetime) -> Judgement:
    """The health of the version a cluster runs, at `now`."""
    verdict = valid_verdict(status)
    late = past_deadline(status, deadline, now)
    if verdict is None:
        why = _why_no_verdict(status)
        if late:
            return Judgement(FAILED, (_late(deadline, status), why))
        return Judgement(PENDING, (why,))
    if verdict.state == HEALTHY:
        return Judgement(HEALTHY, (), verdict.healthy_since or verdict.observed_at,
                         verdict.observed_at, verdict)
    if verdict.state in (PENDING, UNHEALTHY) and late:
        return Judgement(FAILED, (_late(deadline, status), *verdict.reasons),
                         verdict.observed_at, verdict.observed_at, verdict)
    return Judgement(verdict.state, verdict.reasons, verdict.observed_at, verdict.observed_at,
                     verdict)


def _why_no_verdict(status: ClusterStatus) -> str:
    health = status.health
    if not status.current_version:
        return "nothing applied yet"
    if health is None:
        return "not observed since its apply"
    if health.version != status.current_version:
        return f"its last verdict was for another version ({health.version[:7]})"
    return f"its last verdict ({health.observed_at}) is older than its apply ({status.applied_at})"


def _late(deadline: timedelta, status: ClusterStatus) -> str:
    return (f"not healthy within the progress deadline of {format_duration(deadline)} after "
            f"its apply at {status.applied_at}")


@dataclass(frozen=True)
class Observation:
    """What one look at a cluster found: healthy, pending, unhealthy or unknown, and why."""

    state: str
    reasons: tuple[str, ...] = field(default=())


def next_verdict(status: ClusterStatus, observation: Observation, *, deadline: timedelta,
                 now: datetime) -> Health:
    """The verdict to record for `observation` of the cluster whose status is `status`:
    `healthy_since` carried over only from a valid healthy verdict before it (a flap, a new
    version or a new apply restarts it); pending or unhealthy past the deadline is `failed`."""
    state, reasons = observation.state, observation.reasons[:MAX_REASONS]
    since = ""
    if state == HEALTHY:
        previous = valid_verdict(status)
        carried = previous is not None and previous.state == HEALTHY and previous.healthy_since
        since = previous.healthy_since if carried and previous else format_timestamp(now)
    elif state in (PENDING, UNHEALTHY) and past_deadline(status, deadline, now):
        state, reasons = FAILED, (_late(deadline, status), *reasons)[:MAX_REASONS]
    return Health(state, status.current_version, format_timestamp(now), since, tuple(reasons))


def healthy_for(judgement: Judgement) -> timedelta:
    """How long a healthy verdict shows health without a break: from `healthy_since` to the
    last observation (a verdict seen once proves nothing about the time after it)."""
    start = parse_timestamp(judgement.since)
    seen = parse_timestamp(judgement.observed_at)
    if judgement.state != HEALTHY or start is None or seen is None:
        return timedelta(0)
    return max(timedelta(0), seen - start)
