"""Guardrails that keep promotions to the pipeline: the source channel, the canary first, one
freeze reason at a time."""

from __future__ import annotations

import json
from datetime import timedelta

from tests.helpers.fleet import Fleet, default_records
from tests.helpers.promotion import applied

CANARY_FIRST = """channel: beta
branch: beta
source: alpha
gates:
  groups_before: applied   # the rest waits for the canary
groups:
  - name: canary
    selector: {alias: "*-canary"}
  - name: default
"""


def test_a_source_other_than_the_pipeline_s_is_refused_unless_asked(fleet: Fleet) -> None:
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    before = fleet.branch("main")
    r = fleet.cli("promote", "dev", "beta", "--force")
    assert r.code == 1
    assert "'beta' is promoted from 'alpha', not 'dev'" in r.err and "--from-any" in r.err
    assert fleet.branch("main") == before

    r = fleet.cli("promote", "dev", "beta", "--force", "--from-any")
    assert r.code == 0, r.err
    entry = json.loads(fleet.cli("history", "beta", "-o", "json").out)["items"][0]
    assert entry["action"] == "promote" and "from-any" in entry["overrides"]


def test_groups_before_applied_holds_the_rest_until_the_canary_applied(fleet: Fleet) -> None:
    fleet.builder.commit("main", {"channels/beta.yaml": CANARY_FIRST}, "Canary first")
    records = applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c3)
    fleet.set_clusters(records)
    assert fleet.cli("promote", "dev", "alpha").code == 0

    together = fleet.cli("promote", "alpha", "beta", "--dry-run")
    assert "group(s) canary promoted in the same step" in together.err
    assert "promote --group canary first, the rest once it has applied" in together.err
    assert fleet.cli("promote", "alpha", "beta", "--group", "canary").code == 0
    rest = fleet.cli("promote", "alpha", "beta", "--group", "default")
    assert rest.code == 1
    assert "have not: beta-canary" in rest.err
    assert "promote again once reconcile has applied it there" in rest.err

    fleet.set_clusters(applied(applied(records, "alpha", fleet.c3), "beta", fleet.c3,
                               ago=timedelta(minutes=1)))
    rest = fleet.cli("promote", "alpha", "beta", "--group", "default")
    assert rest.code == 0, rest.err


def test_a_second_freeze_does_not_lose_the_first_reason(fleet: Fleet) -> None:
    assert fleet.cli("freeze", "stable", "--reason", "peak season").code == 0
    again = fleet.cli("freeze", "stable", "--reason", "peak season")
    assert again.code == 0  # the same freeze twice is no change
    other = fleet.cli("freeze", "stable", "--reason", "incident 42")
    assert other.code == 1
    assert "already frozen: peak season" in other.err and "unfreeze" in other.err
    assert "peak season" in fleet.builder.git("show", "main:channels/stable.yaml")
    assert "incident 42" not in fleet.builder.git("show", "main:channels/stable.yaml")
