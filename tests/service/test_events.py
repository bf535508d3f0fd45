"""`clmgit.events`: listeners hear what is emitted, in this process and from the engine's
forked workers; `failing_step` names the step that failed."""

from __future__ import annotations

import multiprocessing

import pytest

from clmgit import events
from clmgit.reconcile.workers import forwarded_events


def test_an_event_emitted_in_a_forked_worker_reaches_the_parents_listeners() -> None:
    heard: list[events.Event] = []
    texts: list[tuple[str, str]] = []
    with events.listening(heard.append):
        with forwarded_events(lambda cluster, text: texts.append((cluster, text))) as sink:
            def work() -> None:
                events.emit(events.NODES_REPLACED, cluster="c1", count=3)
                sink("c1", "draining")

            child = multiprocessing.get_context("fork").Process(target=work)
            child.start()
            child.join(timeout=30)
            assert child.exitcode == 0
    assert heard == [events.Event(events.NODES_REPLACED, cluster="c1", fields={"count": "3"})]
    assert texts == [("c1", "draining")]


def test_a_failing_step_is_told_and_its_error_goes_on() -> None:
    heard: list[events.Event] = []
    with events.listening(heard.append), pytest.raises(ValueError, match="boom"):
        with events.failing_step("manifests", cluster="c1"):
            raise ValueError("boom")
    with events.listening(heard.append), events.failing_step("stacks", cluster="c1"):
        pass
    assert [(e.name, e.cluster, dict(e.fields)) for e in heard] == [
        (events.STEP_FAILED, "c1", {"step": "manifests"})]


def test_a_broken_listener_fails_nothing(caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: events.Event) -> None:
        raise RuntimeError("bug")

    heard: list[events.Event] = []
    with events.listening(broken), events.listening(heard.append):
        events.emit(events.RECONCILE_STUCK, "stuck")
    assert [e.name for e in heard] == [events.RECONCILE_STUCK]
    assert "a listener of reconcile.stuck failed" in caplog.text
