"""Notifications (`notify:` in clmgit.yaml): apprise delivers each event once to a
`json://` listener of the test, a dead or silent target costs a warning and at most the bound,
`--no-notify` sends nothing, and a URL is never shown."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record

from clmgit.errors import ConfigError
from clmgit.events import Event
from clmgit.notify import Notifier, Target, parse_notify
from clmgit.registry.file import clusters_yaml
from tests.helpers.cli import run_cli
from tests.helpers.fleet import Fleet
from tests.helpers.scrape import free_port


class Listener:
    """An HTTP server that keeps the JSON body of every POST."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.httpd.server_address[1]}"

    def titles(self) -> list[str]:
        return [b["title"] for b in self.bodies]


@pytest.fixture
def listener() -> Iterator[Listener]:
    served = Listener()
    yield served
    served.httpd.shutdown()
    served.httpd.server_close()


@pytest.fixture
def silent() -> Iterator[str]:
    """A target that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield f"json://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


def _notify(fleet: Fleet, targets: list[dict[str, Any]]) -> None:
    settings = "notify:\n" + "".join(
        f"  - url: {t['url']}\n    events: [{', '.join(t['events'])}]\n"
        + (f"    channels: [{', '.join(t['channels'])}]\n" if "channels" in t else "")
        for t in targets)
    fleet.builder.commit("main", {"clmgit.yaml": settings}, "Notify")


def _settled(listener: Listener, count: int) -> list[str]:
    """The titles once `count` arrived (and a moment more, to see no extra one)."""
    deadline = time.monotonic() + 10
    while len(listener.bodies) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    return listener.titles()


def test_each_event_is_delivered_once_to_the_targets_that_ask_for_it(
        fleet: Fleet, listener: Listener, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_TEST_HOOK", listener.url)
    _notify(fleet, [{"url": "${CLMGIT_TEST_HOOK}", "channels": ["alpha"],
                     "events": ["promotion.landed", "promotion.refused", "promotion.forced"]}])
    assert fleet.cli("promote", "dev", "alpha").code == 1  # dev's cluster has not applied it
    assert _settled(listener, 1) == ["clmgit: promotion.refused"]
    assert "to alpha" in listener.bodies[0]["message"]
    assert "have not applied" in listener.bodies[0]["message"]
    fleet.cli("--no-notify", "promote", "dev", "alpha")  # refused again, and not told

    assert fleet.cli("promote", "dev", "alpha", "--force").code == 0
    assert sorted(_settled(listener, 3)[1:]) == ["clmgit: promotion.forced",
                                                 "clmgit: promotion.landed"]
    fleet.cli("promote", "alpha", "beta", "--force")  # beta: not a channel the target hears
    # The command returns once its notifications are answered (the notifier is flushed on
    # close), so the moment more `_settled` waits would show a fourth one.
    assert len(_settled(listener, 3)) == 3


def test_no_notify_sends_nothing(fleet: Fleet, listener: Listener) -> None:
    _notify(fleet, [{"url": listener.url, "events": ["promotion.landed"]}])
    assert fleet.cli("--no-notify", "promote", "dev", "alpha", "--force").code == 0
    assert _settled(listener, 0) == []


def test_a_dead_or_silent_target_neither_fails_nor_slows_the_command_past_its_bound(
        fleet: Fleet, listener: Listener, silent: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("CLMGIT_NOTIFY_TIMEOUT", "1")
    dead = f"json://127.0.0.1:{free_port()}"
    events = ["promotion.landed"]
    _notify(fleet, [{"url": dead, "events": events}, {"url": silent, "events": events},
                    {"url": listener.url, "events": events}])
    started = time.monotonic()
    result = fleet.cli("promote", "dev", "alpha", "--force")
    took = time.monotonic() - started
    assert result.code == 0, result.err
    # apprise waits 4 s for a silent target's answer; the bound (1 s) ends the wait.
    assert took < 3.5
    assert _settled(listener, 1) == ["clmgit: promotion.landed"]
    assert "cannot notify json://*** of promotion.landed" in caplog.text
    assert "notification(s) not sent within 1s" in caplog.text
    assert "127.0.0.1" not in caplog.text + result.err + result.out


def test_an_unset_variable_is_a_warning_naming_it_not_a_failure(
        caplog: pytest.LogCaptureFixture) -> None:
    sent: list[str] = []

    def send(url: str, event: Event) -> bool:
        sent.append(url)
        return True

    notifier = Notifier(lambda: [Target("${NOT_SET_HOOK}", frozenset({"reconcile.failed"}))],
                        send=send, environ={}, bound=1)
    notifier(Event("reconcile.failed", "cluster c1 failed"))
    notifier.flush()
    assert sent == []
    assert "needs the environment variable NOT_SET_HOOK, which is not set" in caplog.text


@pytest.mark.parametrize(("raw", "message"), [
    ({"url": "x"}, "notify target #1 needs a url"),
    ({"url": "json://h", "events": ["promotion.landd"]}, "unknown event 'promotion.landd'"),
    ({"url": "json://h"}, "notify target #1 needs events"),
    ({"url": "json://h", "events": ["reconcile.failed"], "to": 1}, "unknown key 'to'"),
    ("json://h", "must be a mapping with a url and events"),
])
def test_a_malformed_notify_key_is_one_sentence(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        parse_notify([raw], "clmgit.yaml")


def test_a_malformed_notify_key_never_fails_a_promotion_but_is_named(
        fleet: Fleet, caplog: pytest.LogCaptureFixture) -> None:
    """A promotion reads clmgit.yaml's notify: only when it has something to tell, after the
    change: too late to refuse, so a warning says what is wrong (commands that read the
    layout, such as reconcile, refuse it up front)."""
    fleet.builder.commit("main", {"clmgit.yaml": "notify: {url: x}\n"}, "Bad notify")
    assert fleet.cli("promote", "dev", "alpha", "--force").code == 0
    assert ("no notification of promotion.landed: clmgit.yaml on branch 'main': key 'notify' "
            "must be a list of "
            "targets, each with a url and events") in caplog.text
    assert fleet.cli("render", "--cluster", "dev-1").code == 1


def test_a_cluster_failing_the_same_way_round_after_round_is_told_once() -> None:
    sent: list[str] = []

    def send(url: str, event: Event) -> bool:
        sent.append(event.message)
        return True

    notifier = Notifier(lambda: [Target("json://h", frozenset({"reconcile.failed"}))],
                        send=send, bound=5)

    def round_(outcome: str, detail: str = "") -> None:
        notifier(Event("cluster.result", cluster="c1", fields={"outcome": outcome}))
        if outcome == "failed":
            notifier(Event("reconcile.failed", f"cluster c1 failed: {detail}", cluster="c1"))
        notifier.flush()

    round_("failed", "boom")
    round_("failed", "boom")  # the same failure: not told again
    round_("failed", "bang")  # another one
    round_("applied")
    round_("failed", "bang")  # failing again after it recovered
    assert sent == ["cluster c1 failed: boom", "cluster c1 failed: bang",
                    "cluster c1 failed: bang"]


def test_a_channel_filter_lets_events_of_no_channel_through() -> None:
    target = Target("json://h", frozenset({"reconcile.stuck", "reconcile.failed"}),
                    frozenset({"stable"}))
    assert target.wants(Event("reconcile.stuck", "stuck"))
    assert target.wants(Event("reconcile.failed", "x", channel="stable"))
    assert not target.wants(Event("reconcile.failed", "x", channel="beta"))


def test_reconcile_tells_of_a_failed_cluster(moto_endpoint: str, listener: Listener,
                                             tmp_path) -> None:
    """The CLI in CI sends what it sees: a cluster whose template does not render."""
    b = ConfigRepoBuilder(tmp_path / "config")
    b.commit("dev", {"cluster/stack.yaml": "Resources: {{ broken\n"}, "A broken template")
    record = cluster_record("aws:123456789012:eu-central-1:notify-1", channel="dev")
    b.commit("main", {"channels/dev.yaml": "channel: dev\nbranch: dev\n",
                      "clusters.yaml": clusters_yaml([record]),
                      "clmgit.yaml": f"notify:\n  - url: {listener.url}\n"
                                     "    events: [reconcile.failed]\n"}, "Clusters")
    result = run_cli("--repo", str(b.path), "reconcile", "--token", "not-a-real-token")
    assert result.code == 4, result.err
    assert _settled(listener, 1) == ["clmgit: reconcile.failed (notify-1)"]
    assert listener.bodies[0]["message"].startswith("cluster notify-1 failed: ")


def test_a_secret_quoted_in_an_event_is_masked_in_the_notification(
        listener: Listener, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_TOKEN", "s3cr3t-token-value-42")
    notifier = Notifier(lambda: [Target(listener.url, frozenset({"reconcile.failed"}))],
                        bound=10)
    notifier(Event("reconcile.failed", "cluster c1 failed: bad token s3cr3t-token-value-42",
                   cluster="c1"))
    notifier.flush()
    assert _settled(listener, 1) == ["clmgit: reconcile.failed (c1)"]
    assert "s3cr3t" not in listener.bodies[0]["message"]
    assert listener.bodies[0]["message"].startswith("cluster c1 failed: bad token ")


def test_a_promotion_forced_past_a_closed_window_tells_window_bypassed(
        fleet: Fleet, listener: Listener, monkeypatch: pytest.MonkeyPatch) -> None:
    alpha = ("channel: alpha\nbranch: alpha\nsource: dev\nwindows:\n  timezone: Europe/Berlin\n"
             "  allow: [\"Mon-Thu 09:00-16:00\"]\ngroups:\n  - name: default\n")
    fleet.builder.commit("main", {"channels/alpha.yaml": alpha}, "alpha: a window")
    _notify(fleet, [{"url": listener.url, "events": ["window.bypassed"]}])
    monkeypatch.setenv("CLMGIT_NOW", "2026-11-27T17:00:00+01:00")  # a Friday evening
    assert fleet.cli("promote", "dev", "alpha").code == 1  # closed: nothing is bypassed
    assert fleet.cli("promote", "dev", "alpha", "--force").code == 0
    assert _settled(listener, 1) == ["clmgit: window.bypassed"]
    assert "outside the promotion windows of 'alpha'" in listener.bodies[0]["message"]
