"""reconcile looks at a cluster's health right after each apply and records the
verdict with the applied version; a look that fails never undoes the apply."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from clmgit.healthstate import PENDING, Observation, next_verdict
from clmgit.model import Cluster, Health, desired_version
from tests.helpers.reconcile import SHA, FakeEngine, make_registry, record, run

NOW = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def test_the_verdict_of_a_look_after_the_apply_is_recorded_with_the_version(tmp_path) -> None:
    reg = make_registry(tmp_path, [record("a")])
    seen: list[Cluster] = []

    def observe(cluster: Cluster) -> Health:
        seen.append(cluster)
        return next_verdict(cluster.status, Observation(PENDING, ("rolling out",)),
                            deadline=timedelta(minutes=30), now=NOW)

    [result] = run(reg, FakeEngine(), observe=observe)
    assert result.outcome == "applied"
    [c] = reg.clusters()
    # The look saw the record as the apply leaves it: the new version, applied just now.
    assert seen[0].status.current_version == desired_version(SHA, c) and seen[0].status.applied_at
    assert c.status.health == Health(PENDING, desired_version(SHA, c), "2026-11-20T10:00:00Z",
                                     "", ("rolling out",))


def test_a_look_that_fails_leaves_the_apply_recorded_without_a_verdict(tmp_path) -> None:
    reg = make_registry(tmp_path, [record("a")])

    def observe(cluster: Cluster) -> Health:
        raise RuntimeError("the observer broke")

    [result] = run(reg, FakeEngine(), observe=observe)
    assert result.outcome == "applied"
    [c] = reg.clusters()
    assert c.status.current_version == desired_version(SHA, c) and c.status.health is None


def test_the_look_at_health_asks_the_engines_factory_of_backends() -> None:
    """One factory of real backends for the engine and the look: same credentials, account
    check and endpoints (its `check` is what a run asks of every cluster first)."""
    from clmgit.layout import CLM_LAYOUT
    from clmgit.reconcile.backends import AwsBackends
    from clmgit.reconcile.health import health_backends
    from clmgit.reconcile.session import Options

    options = Options(token="t0ken")
    made = health_backends(options.backends, options.access, clock=options.clock,
                           layout=CLM_LAYOUT)

    assert getattr(made, "__func__", None) is AwsBackends.health
    assert getattr(made, "__self__", None) == AwsBackends(options.access, layout=CLM_LAYOUT)


def test_every_verdict_is_told_and_a_failed_one_raises_health_failed() -> None:
    """`reconcile` and `clmgit health` look through one Observer, so both tell the verdict
    (`health.verdict`) and a failed one (`health.failed`, for alerts)."""
    from dataclasses import replace

    from clmgit import events
    from clmgit.healthstate import FAILED, UNHEALTHY, ClusterGate
    from clmgit.model import parse_cluster
    from clmgit.reconcile.health import Observer

    class Crashing(Observer):
        def look(self, cluster: Cluster) -> Observation:
            return Observation(UNHEALTHY, ("Deployment platform/echo: CrashLoopBackOff",))

    cluster = parse_cluster(record("a"), "record")
    applied = (NOW - timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    cluster = replace(cluster, status=replace(cluster.status, current_version="v#1",
                                              applied_at=applied))
    heard: list[events.Event] = []
    observer = Crashing(lambda c: None, lambda c: ClusterGate(), now=lambda: NOW)  # type: ignore[arg-type, return-value]  # never asked
    with events.listening(heard.append):
        health = observer.verdict(cluster)
    assert health.state == FAILED
    assert [(e.name, e.cluster) for e in heard] == [(events.HEALTH_VERDICT, "a"),
                                                    (events.HEALTH_FAILED, "a")]
    assert "CrashLoopBackOff" in heard[1].message
