"""A platform team's week, end to end through the real CLI: nine clusters on moto and the
Kubernetes emulator, four channels with canary waves, soak and `groups_before`; a change carried
from dev to stable; an incident (a bad change rolled back from beta's canary, stable frozen, a
fix committed on beta shipped as a hotfix and merged back into dev); a second config source
added to the running fleet. No gate is forced all week: history records no override.

The clock is `CLMGIT_NOW`: every command of the week runs at the hour the story says, so
soak times pass without a sleep."""

from __future__ import annotations

import json
from typing import Any

import pytest
from clmgit_sandbox.configrepo import ConfigRepoBuilder
from clmgit_sandbox.configtree import cluster_tree

from tests.helpers.cli import Result
from tests.helpers.sandbox import Sandbox

pytestmark = pytest.mark.slow  # end to end: moto, the emulator, nine clusters

#: The team's waves: the record's alias suffix → (channel, the group the channel files select).
WAVES = [("dev", "a"), ("dev", "b"), ("alpha", "a"), ("alpha", "b"), ("beta", "canary"),
         ("beta", "b"), ("stable", "canary"), ("stable", "early"), ("stable", "b")]

ADDON = """\
apiVersion: v1
kind: ConfigMap
metadata: {{name: addon, namespace: platform}}
data: {{version: "{v}"}}
"""

HOTFIX = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: echo-timeout, namespace: platform}
data: {timeout: "30s"}
"""

CHANNELS = {
    "channels/dev.yaml": "channel: dev\nbranch: dev\n",
    "channels/alpha.yaml": """\
channel: alpha
branch: alpha
source: dev
gates:
  applied_in_source: true
groups:
  - name: default
    sha: {v1}
""",
    "channels/beta.yaml": """\
# beta: canaries first, an hour later the rest
channel: beta
branch: beta
source: alpha
gates:
  applied_in_source: true
  soak: 2h
  groups_before: applied
groups:
  - name: canary
    selector: {{alias: "*-canary"}}
    sha: {v1}
  - name: default
    sha: {v1}
""",
    "channels/stable.yaml": """\
channel: stable
branch: stable
source: beta
gates:
  applied_in_source: true
  soak: 24h
  groups_before: applied
groups:
  - name: canary
    selector: {{alias: "*-canary"}}
    sha: {v1}
  - name: early
    selector: {{alias: "*-early"}}
    sha: {v1}
  - name: default
    sha: {v1}
""",
}


class Week:
    """The team's sandbox, and the clock it runs by."""

    def __init__(self, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sandbox = sandbox
        self.monkeypatch = monkeypatch

    def at(self, when: str) -> Week:
        self.monkeypatch.setenv("CLMGIT_NOW", f"2026-11-{when}:00+00:00")
        return self

    def ok(self, *args: str) -> Result:
        """`clmgit ARGS`, which must succeed; no gate of the week is forced unless said."""
        result = (self.sandbox.reconcile(*args[1:]) if args[0] == "reconcile"
                  else self.sandbox.cli(*args))
        assert result.code == 0, f"clmgit {' '.join(args)}: {result.err}{result.out[-2000:]}"
        return result

    def refused(self, *args: str) -> str:
        result = self.sandbox.cli(*args)
        assert result.code == 1, f"clmgit {' '.join(args)} was not refused: {result.out}"
        return result.err

    def states(self) -> dict[str, tuple[str, str]]:
        """alias → (state, pinned version's SHA prefix) from `status -o json`."""
        doc = json.loads(self.ok("status", "-o", "json").out)
        return {row["alias"]: (row["state"], row["pinned_sha"] or "")
                for row in doc["items"]}


@pytest.fixture
def week(sandbox_factory, monkeypatch: pytest.MonkeyPatch) -> Week:
    def edit(records: list[dict[str, Any]]) -> None:
        for record, (channel, wave) in zip(records, WAVES, strict=True):
            record["channel"] = channel
            record["alias"] = f"{record['alias']}-{channel}-{wave}"

    sandbox = sandbox_factory(len(WAVES), edit=edit)
    v1 = sandbox.versions[0]
    sandbox.builder.commit("main", {p: t.format(v1=v1) for p, t in CHANNELS.items()},
                           "Channels: waves, soak, canaries first; every group at version 1")
    return Week(sandbox, monkeypatch)


def test_a_week_moves_a_change_to_stable_with_no_gate_forced(week: Week) -> None:
    sb = week.sandbox
    # Monday: the fleet comes up at version 1.
    week.at("23T08:00").ok("reconcile", "-q")
    assert {s for s, _ in week.states().values()} == {"in-sync"}

    # A reviewed change lands on dev; dev's clusters follow their branch.
    v2 = sb.builder.commit("dev", cluster_tree(2), "Echo 1.2, tracing on")
    week.at("23T09:00").ok("reconcile", "-q", "--channel", "dev")
    week.at("23T09:10").ok("promote", "dev", "alpha")
    week.at("23T09:20").ok("reconcile", "-q", "--channel", "alpha")

    # beta: too early for the soak, and the default group waits for its canaries.
    err = week.at("23T10:00").refused("promote", "alpha", "beta", "--group", "canary")
    assert "soaked" in err and "left" in err
    err = week.at("23T11:30").refused("promote", "alpha", "beta", "--group", "default")
    assert "canary" in err  # the refusal names the next step: the canaries first
    week.ok("promote", "alpha", "beta", "--group", "canary")
    week.at("23T11:40").ok("reconcile", "-q", "--channel", "beta")
    week.at("23T12:40").ok("promote", "alpha", "beta")
    week.at("23T12:50").ok("reconcile", "-q", "--channel", "beta")

    # Tuesday: stable, wave by wave, once beta has soaked for a day.
    week.at("24T12:00").refused("promote", "beta", "stable", "--group", "canary")
    week.at("24T13:00")
    for wave in ("canary", "early", "default"):
        week.ok("promote", "beta", "stable", "--group", wave)
        week.ok("reconcile", "-q", "--channel", "stable")
    states = week.states()
    assert set(states.values()) == {("in-sync", v2)}, states

    # Wednesday: a bad change reaches beta's canary; the incident rolls it back and freezes
    # stable while it is looked at.
    v3 = sb.builder.commit("dev", cluster_tree(3), "Echo 1.3")
    week.at("25T09:00").ok("reconcile", "-q", "--channel", "dev")
    week.ok("promote", "dev", "alpha")
    week.ok("reconcile", "-q", "--channel", "alpha")
    week.at("25T11:10").ok("promote", "alpha", "beta", "--group", "canary")
    week.ok("reconcile", "-q", "--channel", "beta")
    week.at("25T11:30").ok("freeze", "stable", "--reason", "echo 1.3 incident")
    week.ok("rollback", "beta", "--group", "canary")
    week.ok("reconcile", "-q", "--channel", "beta")
    assert {a: s for a, s in week.states().items() if a.endswith("-beta-canary")} \
        .popitem()[1] == ("in-sync", v2)
    groups = json.loads(week.ok("status", "--by", "group", "-o", "json").out)["items"]
    assert {(g["channel"], g["frozen"]) for g in groups if g["channel"] == "stable"} == {
        ("stable", True)}, groups

    # The fix for beta cannot wait for dev's next change: it is committed on beta's own
    # branch and shipped as a hotfix, canary first, then brought back into the pipeline.
    fix = sb.builder.commit("beta", {**cluster_tree(2), "cluster/manifests/platform/fix.yaml":
                                     HOTFIX}, "Hotfix: echo's timeout")
    week.at("25T12:00").ok("promote", "beta", "beta", "--sha", fix, "--group", "canary")
    week.ok("reconcile", "-q", "--channel", "beta")
    week.at("25T12:30").ok("promote", "beta", "beta", "--sha", fix)
    week.ok("reconcile", "-q", "--channel", "beta")
    assert {s for a, s in week.states().items() if "-beta-" in a} == {("in-sync", fix)}
    week.ok("sync-branches")
    sb.builder.git("merge-base", "--is-ancestor", fix, "dev")  # the fix is on dev now
    week.at("25T13:00").ok("reconcile", "-q", "--channel", "dev")
    week.ok("promote", "dev", "alpha")
    week.ok("reconcile", "-q", "--channel", "alpha")
    week.ok("unfreeze", "stable")

    # Thursday: a second config source joins the running fleet; nobody is blocked, and its
    # next change travels like any other.
    addons = ConfigRepoBuilder(sb.path.parent / "addons")
    addons.commit("dev", {"cluster/manifests/extra/cm.yaml": ADDON.format(v=1)}, "Add-on v1")
    for channel in ("alpha", "beta", "stable"):
        addons.git("branch", channel, "dev")
    week.at("26T09:00").ok("sources", "add", "addons", "--repo", str(addons.path))
    assert "blocked" not in {s for s, _ in week.states().values()}
    week.ok("reconcile", "-q")
    assert {s for s, _ in week.states().values()} == {"in-sync"}
    addons.commit("dev", {"cluster/manifests/extra/cm.yaml": ADDON.format(v=2)}, "Add-on v2")
    week.at("26T10:00").ok("reconcile", "-q", "--channel", "dev")
    diff = week.ok("diff", "dev", "alpha").out
    assert "Add-on v2" in diff and "Echo" not in diff  # only what changed
    week.ok("promote", "dev", "alpha")
    week.ok("reconcile", "-q", "--channel", "alpha")
    server = sb.fleet.server(next(a for a in week.states() if a.endswith("-alpha-a")))
    addon = server.read("v1", "ConfigMap", "addon", "platform")
    assert addon is not None and addon["data"] == {"version": "2"}

    # The week's history: every promotion through the gates, no override recorded.
    history = json.loads(week.ok("history", "-o", "json").out)["items"]
    actions = [entry["action"] for entry in history]
    assert [actions.count(a) for a in ("promote", "hotfix", "rollback")] == [10, 2, 1], actions
    assert [entry for entry in history if entry["overrides"]] == []
    assert v3  # on dev and alpha, held back from beta by the rollback
