"""The controller's rounds as Kubernetes and Prometheus see them (`clmgit.service`): live
until a round runs past twice the interval, ready after a round that ran, `reconcile.stuck`
told once per stuck round."""

from __future__ import annotations

import threading

from clmgit import events
from clmgit.service import RoundWatch
from tests.helpers.scrape import value


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _samples(watch: RoundWatch) -> dict:
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    text = generate_latest(watch.metrics.registry).decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def test_live_until_a_round_runs_past_twice_the_interval() -> None:
    clock = Clock()
    watch = RoundWatch(interval=600, clock=clock)
    assert watch.live() is None
    watch.started()
    clock.now += 1199
    assert watch.live() is None
    clock.now += 2
    assert watch.live() == ("the round under way started 1201s ago, more than twice the "
                            "interval (1200s)")
    watch.finished(None, [("applied", "dev")])
    assert watch.live() is None


def test_ready_after_a_round_that_ran_not_after_one_that_could_not() -> None:
    clock = Clock()
    watch = RoundWatch(interval=60, clock=clock)
    assert watch.ready() == "no round has finished yet"
    watch.started()
    assert value(_samples(watch), "clmgit_round_in_progress") == 1
    clock.now += 12.5
    watch.finished(None, [("applied", "dev"), ("in-sync", "dev"), ("failed", "beta")])
    assert watch.ready() is None
    found = _samples(watch)
    assert value(found, "clmgit_round_in_progress") == 0
    assert value(found, "clmgit_round_interval_seconds") == 60
    assert value(found, "process_start_time_seconds") > 0  # the alert on no round reads it
    assert value(found, "clmgit_rounds_total", result="ok") == 1
    assert value(found, "clmgit_round_duration_seconds_sum") == 12.5
    assert value(found, "clmgit_round_duration_seconds_bucket", le="15.0") == 1
    assert value(found, "clmgit_round_duration_seconds_bucket", le="5.0") == 0
    assert value(found, "clmgit_clusters", state="failed", channel="beta") == 1
    watch.started()
    watch.finished(OSError("the registry is unreachable"))
    assert watch.ready() == "the last round failed: the registry is unreachable"
    found = _samples(watch)
    assert value(found, "clmgit_rounds_total", result="failed") == 1
    assert value(found, "clmgit_clusters", state="failed", channel="beta") == 1  # kept


def test_a_stuck_round_is_told_once() -> None:
    told = threading.Event()
    heard: list[events.Event] = []

    def hear(event: events.Event) -> None:
        heard.append(event)
        told.set()

    watch = RoundWatch(interval=0.05)
    with events.listening(hear):
        watch.started()
        assert told.wait(10)
        watch.finished(None)
        watch.started()  # a round that ends in time is not told
        watch.finished(None)
    assert [e.name for e in heard] == [events.RECONCILE_STUCK]
    assert heard[0].message == ("the controller's round has run for more than 0.1s (twice "
                                "the interval)")
