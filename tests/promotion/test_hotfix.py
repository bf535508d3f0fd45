"""The hotfix path (docs/how-to/incidents.md, "Ship a hotfix"): a commit of a channel's own
branch promoted with `promote beta beta --sha FIX`, judged by the planner's gates, recorded as a
hotfix, and brought back into the pipeline by `sync-branches` — through the real CLI on real
repositories with bare origins."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from clmgit_sandbox.github import GitHubStandIn

from clmgit.promotion import gates, promote
from tests.helpers.cli import Result, run_cli
from tests.helpers.fleet import Fleet, default_records
from tests.helpers.github import REPOSITORY, TOKEN
from tests.helpers.promotion import applied, last_message, pins
from tests.helpers.signing import keygen, needs_ssh_keygen, signed_commit
from tests.helpers.sources import two_sources

Gate = Callable[[gates.Promotion], list[gates.GateResult]]
FIXED_POOL = {"cluster/node-pools/worker-default/stack.yaml": "Resources: {Fixed: 1}\n"}


def beta_with_fix(fleet: Fleet) -> str:
    """beta pinned at c3 (promoted through dev and alpha), then a fix committed on its branch."""
    fleet.set_clusters(applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha").code == 0
    assert fleet.cli("promote", "alpha", "beta").code == 0
    assert fleet.branch("beta") == fleet.c3
    return fleet.builder.commit("beta", FIXED_POOL, "Fix the worker pool")


def test_a_hotfix_is_promoted_and_recorded_as_one(fleet: Fleet) -> None:
    fix = beta_with_fix(fleet)
    r = fleet.cli("promote", "beta", "beta", "--sha", fix[:10])
    assert r.code == 0, r.err
    assert f"hotfix beta/canary: {fleet.c3[:7]} -> {fix[:7]} (1 cluster)" in r.out
    assert pins(fleet, "beta") == {"canary": fix, "default": fix}
    message = last_message(fleet)
    assert message.splitlines()[0] == f"hotfix(beta): {fleet.c3[:7]}..{fix[:7]} [canary,default]"
    assert "Clmgit-Action: hotfix\n" in message and f"Clmgit-Sha: {fix}\n" in message
    assert "Fix the worker pool" in message  # the shortlog of what it brings
    said = " ".join(message.split())  # what a hotfix is not judged by
    assert "the gates of its source channel do not apply (applied_in_source, soak" in said
    assert all(len(line) <= 72 for line in message.splitlines()[1:] if " " in line)
    assert "promoted_from: hotfix" in fleet.file("channels/beta.yaml")
    assert fleet.branch("beta") == fix  # the branch is at the pin already

    history = fleet.cli("history", "beta", "-o", "json")
    entry = json.loads(history.out)["items"][0]
    assert (entry["action"], entry["sha"], entry["groups"]) == ("hotfix", fix,
                                                                ["canary", "default"])
    assert "hotfix(beta)" in fleet.cli("history", "beta").out


def test_a_hotfix_dry_run_and_json_say_what_it_is(fleet: Fleet) -> None:
    fix = beta_with_fix(fleet)
    before = fleet.branch("main")
    r = fleet.cli("promote", "beta", "beta", "--sha", fix, "--dry-run", "-o", "json")
    assert r.code == 0, r.err
    plan = json.loads(r.out)["result"]
    assert (plan["outcome"], plan["action"], plan["source"]) == ("dry-run", "hotfix", "beta")
    assert plan["message"].startswith("hotfix(beta): ")
    assert any("a hotfix has run in no channel before 'beta'" in n for n in plan["notes"])
    assert fleet.branch("main") == before


def test_a_hotfix_runs_none_of_the_upstream_gates(fleet: Fleet,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """They are chosen out before the gates run, not run and their answers dropped."""
    ran: list[str] = []

    def recorded(gate: Gate) -> Gate:
        def run(p: gates.Promotion) -> list[gates.GateResult]:
            ran.append(gate.__name__)
            return gate(p)
        return run

    upstream = {gate.__name__ for gate in promote.UPSTREAM}
    wrapped = {gate: recorded(gate) for gate in promote.GATES}
    monkeypatch.setattr(promote, "GATES", tuple(wrapped.values()))
    monkeypatch.setattr(promote, "UPSTREAM", tuple(wrapped[g] for g in promote.UPSTREAM))
    fix = beta_with_fix(fleet)
    assert fleet.cli("promote", "alpha", "beta", "--dry-run").code == 0
    assert upstream <= set(ran)
    ran.clear()
    assert fleet.cli("promote", "beta", "beta", "--sha", fix, "--dry-run").code == 0
    assert ran and not upstream & set(ran)


def test_a_frozen_channel_refuses_a_hotfix(fleet: Fleet) -> None:
    fix = beta_with_fix(fleet)
    assert fleet.cli("freeze", "beta", "--reason", "incident review").code == 0
    before = fleet.branch("main")
    r = fleet.cli("promote", "beta", "beta", "--sha", fix)
    assert r.code == 1
    assert "hotfix of" in r.err and "'beta' is frozen: incident review" in r.err
    assert fleet.branch("main") == before
    assert fleet.cli("promote", "beta", "beta", "--sha", fix, "--ignore-freeze").code == 0
    assert "Clmgit-Override: ignore-freeze" in last_message(fleet)


def test_a_hotfix_that_drops_the_pin_is_refused(fleet: Fleet) -> None:
    beta_with_fix(fleet)
    r = fleet.cli("promote", "beta", "beta", "--sha", fleet.c1)  # on beta's branch, behind c3
    assert r.code == 1
    assert f"{fleet.c1[:7]} does not contain the pins of 'beta'" in r.err
    assert f"canary at {fleet.c3[:7]}" in r.err
    assert pins(fleet, "beta") == {"canary": fleet.c3, "default": fleet.c3}


def test_a_commit_not_on_the_channel_branch_is_refused_naming_the_next_step(
    fleet: Fleet,
) -> None:
    beta_with_fix(fleet)
    elsewhere = fleet.builder.commit("feature", FIXED_POOL, "A fix on a feature branch",
                                     start=fleet.c3)
    r = fleet.cli("promote", "beta", "beta", "--sha", elsewhere)
    assert r.code == 1
    assert f"{elsewhere} is not on branch 'beta' of channel 'beta'" in r.err
    assert "merge it into 'beta' first" in r.err and "Traceback" not in r.err


def test_a_fix_on_the_target_branch_promoted_from_upstream_names_the_hotfix(
    fleet: Fleet,
) -> None:
    fix = beta_with_fix(fleet)
    r = fleet.cli("promote", "alpha", "beta", "--sha", fix)
    assert r.code == 1
    assert "not on branch 'alpha'" in r.err
    assert f"ship it as a hotfix: clmgit promote beta beta --sha {fix[:12]}" in r.err
    r = fleet.cli("promote", "beta", "beta")
    assert r.code == 1 and "clmgit promote beta beta --sha SHA" in r.err


def test_groups_before_holds_for_a_hotfix(fleet: Fleet) -> None:
    fix = beta_with_fix(fleet)
    text = fleet.file("channels/beta.yaml").replace(
        "  soak: 2h", "  soak: 2h\n  groups_before: applied")
    fleet.builder.commit("main", {"channels/beta.yaml": text}, "Canary first")
    r = fleet.cli("promote", "beta", "beta", "--sha", fix)
    assert r.code == 1 and "promote --group canary first" in r.err
    assert fleet.cli("promote", "beta", "beta", "--sha", fix, "--group", "canary").code == 0
    r = fleet.cli("promote", "beta", "beta", "--sha", fix, "--group", "default")
    assert r.code == 1 and "beta-canary" in r.err  # the canary has not applied the fix yet
    records = applied(applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c3),
                      "beta", fix)
    fleet.set_clusters(records)
    r = fleet.cli("promote", "beta", "beta", "--sha", fix, "--group", "default")
    assert r.code == 0, r.err
    assert pins(fleet, "beta") == {"canary": fix, "default": fix}


def test_a_hotfix_pushes(fleet: Fleet) -> None:
    fix = beta_with_fix(fleet)
    fleet.builder.git("push", "-q", "origin", "beta", "main")
    r = fleet.cli("promote", "beta", "beta", "--sha", fix, "--push")
    assert r.code == 0, r.err
    remote = fleet.builder.git("--git-dir", str(fleet.origin), "log", "-1", "--format=%s", "main")
    assert remote.startswith("hotfix(beta): ")


def hotfixed_beta_and_dev_moved_on(fleet: Fleet) -> tuple[str, str]:
    """beta hotfixed to FIX, and dev one commit further (to another file): (fix, c4)."""
    fix = beta_with_fix(fleet)
    assert fleet.cli("promote", "beta", "beta", "--sha", fix).code == 0
    c4 = fleet.builder.commit("dev", {"cluster/stack.yaml": "v: 4\n"}, "Raise the version to 4")
    return fix, c4


def test_sync_branches_merges_the_hotfix_into_the_first_channel(fleet: Fleet) -> None:
    fix, c4 = hotfixed_beta_and_dev_moved_on(fleet)
    r = fleet.cli("sync-branches", "--dry-run")
    assert r.code == 0, r.err
    assert f"would move dev: {c4[:7]} -> {fix[:7]} (hotfix-merge)" in r.out
    assert fleet.branch("dev") == c4

    r = fleet.cli("sync-branches")
    assert r.code == 0, r.err
    merge = fleet.branch("dev")
    parents = fleet.builder.git("rev-list", "--parents", "-n1", merge).split()[1:]
    assert parents == [c4, fix]  # a merge on top of dev, nothing rewritten
    files = {"cluster/stack.yaml": "v: 4\n", **FIXED_POOL}
    for path, text in files.items():
        assert fleet.builder.git("show", f"{merge}:{path}") + "\n" == text
    assert fleet.branch("alpha") == fleet.c3  # the channels between get it by promotion
    assert f"Clmgit-Hotfix: {fix}" in fleet.builder.git("log", "-1", "--format=%B", merge)

    entry = json.loads(fleet.cli("history", "dev", "-o", "json").out)["items"][0]
    assert entry["action"] == "sync" and entry["sha"] == fix
    assert entry["subject"] == f"sync(dev): merged hotfix {fix[:7]} of beta into dev"
    r = fleet.cli("sync-branches")  # dev contains the fix now: nothing to do
    assert r.code == 0 and fleet.branch("dev") == merge


def test_after_sync_the_pipeline_promotes_without_force(fleet: Fleet) -> None:
    fix, _ = hotfixed_beta_and_dev_moved_on(fleet)
    assert fleet.cli("sync-branches").code == 0
    merge = fleet.branch("dev")
    fleet.set_clusters(applied(applied(default_records(), "dev", merge), "alpha", merge))
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 0, r.err
    r = fleet.cli("promote", "alpha", "beta")
    assert r.code == 0, r.err
    assert pins(fleet, "beta") == {"canary": merge, "default": merge}
    assert "Clmgit-Override" not in last_message(fleet)
    assert fleet.branch("beta") == merge  # a fast-forward from the fix: it is kept
    assert "promoted_from: hotfix" not in fleet.file("channels/beta.yaml")


def test_before_sync_the_next_promotion_names_the_way_back(fleet: Fleet) -> None:
    fix, c4 = hotfixed_beta_and_dev_moved_on(fleet)
    fleet.set_clusters(applied(applied(default_records(), "dev", c4), "alpha", c4))
    assert fleet.cli("promote", "dev", "alpha").code == 0
    r = fleet.cli("promote", "alpha", "beta")
    assert r.code == 1
    assert f"canary at {fix[:7]}" in r.err
    assert "`clmgit sync-branches` merges it into the first channel's branch" in r.err
    assert pins(fleet, "beta") == {"canary": fix, "default": fix}  # the fix is not dropped


def test_a_hotfix_that_conflicts_upstream_is_refused_naming_branch_and_files(
    fleet: Fleet,
) -> None:
    fleet.set_clusters(applied(applied(default_records(), "dev", fleet.c3), "alpha", fleet.c3))
    assert fleet.cli("promote", "dev", "alpha").code == 0
    assert fleet.cli("promote", "alpha", "beta").code == 0
    fix = fleet.builder.commit("beta", {"cluster/stack.yaml": "v: 3-fixed\n"}, "Fix v3")
    assert fleet.cli("promote", "beta", "beta", "--sha", fix).code == 0
    c4 = fleet.builder.commit("dev", {"cluster/stack.yaml": "v: 4\n"}, "Raise the version to 4")
    control = fleet.branch("main")
    for force in ((), ("--force",)):
        r = fleet.cli("sync-branches", *force)
        assert r.code == 1
        assert (f"the hotfix {fix[:7]} of 'beta' conflicts with branch 'dev' at {c4[:7]} in "
                "cluster/stack.yaml") in r.err
        assert r.err.count("\n") == 1 and "Traceback" not in r.err
        assert (fleet.branch("dev"), fleet.branch("main")) == (c4, control)  # nothing written


UNGATED = {
    "channels/dev.yaml": "channel: dev\nbranch: dev\n",
    "channels/beta.yaml": ("channel: beta\nsource: dev\ngroups:\n"
                           "  - name: canary\n    selector: {alias: \"*-canary\"}\n"
                           "  - name: default\n"),
}


def test_with_two_sources_a_hotfix_moves_only_its_source(tmp_path: Path) -> None:
    repos = two_sources(tmp_path, main_tree={"cluster/stack.yaml": "v: 1\n"},
                        addons_tree={"cluster/manifests/app.yaml": "app: 1\n"}, records=[],
                        channels=UNGATED)

    def cli(*args: str) -> Result:
        return run_cli("--repo", str(repos.main.path), *args)

    assert cli("promote", "dev", "beta").code == 0
    main1, addons1 = repos.sha("main", "dev"), repos.sha("addons", "dev")
    fix = repos.addons.commit("beta", {"cluster/manifests/fix.yaml": "fix: 1\n"}, "Add-on fix")
    r = cli("promote", "beta", "beta", "--sha", f"addons={fix}")
    assert r.code == 0, r.err
    beta = yaml.safe_load((repos.main.path / "channels/beta.yaml").read_text())
    assert [g["sha"] for g in beta["groups"]] == [{"main": main1, "addons": fix}] * 2
    message = repos.main.git("log", "-1", "--format=%B", "main")
    assert message.startswith(f"hotfix(beta): main {main1[:7]}..{main1[:7]}, "
                              f"addons {addons1[:7]}..{fix[:7]} [canary,default]\n")
    assert "Clmgit-Action: hotfix" in message

    main2 = repos.main.commit("dev", {"cluster/stack.yaml": "v: 2\n"}, "Main v2")
    addons2 = repos.addons.commit("dev", {"cluster/manifests/app.yaml": "app: 2\n"}, "App 2")
    r = cli("sync-branches")
    assert r.code == 0, r.err
    assert f"moved addons dev: {addons2[:7]} -> {fix[:7]} (hotfix-merge)" in r.out
    assert repos.sha("main", "dev") == main2  # the other source has nothing to take
    merged = repos.sha("addons", "dev")
    assert repos.addons.git("rev-list", "--parents", "-n1", merged).split()[1:] == [addons2, fix]
    record = repos.main.git("log", "-1", "--format=%B", "main")
    assert record.startswith(f"sync(dev): merged hotfix {fix[:7]} of beta into dev\n")
    assert f"source 'addons': hotfix: {fix} of channel beta merged into branch dev" in record

    r = cli("promote", "dev", "beta")
    assert r.code == 0, r.err
    beta = yaml.safe_load((repos.main.path / "channels/beta.yaml").read_text())
    assert [g["sha"] for g in beta["groups"]] == [{"main": main2, "addons": merged}] * 2
    assert "Clmgit-Override" not in repos.main.git("log", "-1", "--format=%B", "main")
    assert repos.sha("addons", "beta") == merged  # fast-forward from the fix


def test_a_hotfix_outside_the_channel_windows_is_refused(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch,
) -> None:
    fix = beta_with_fix(fleet)
    text = fleet.file("channels/beta.yaml").replace(
        "groups:", "windows:\n  timezone: UTC\n  allow: [\"Mon-Thu 09:00-16:00\"]\ngroups:", 1)
    fleet.builder.commit("main", {"channels/beta.yaml": text}, "beta: promotion windows")
    monkeypatch.setenv("CLMGIT_NOW", "2026-11-27T17:00:00Z")  # a Friday evening
    r = fleet.cli("promote", "beta", "beta", "--sha", fix)
    assert r.code == 1 and "outside the promotion windows of 'beta'" in r.err
    monkeypatch.setenv("CLMGIT_NOW", "2026-11-30T09:00:00Z")  # Monday morning
    assert fleet.cli("promote", "beta", "beta", "--sha", fix).code == 0


def test_a_hotfix_is_proposed_as_a_pull_request(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch,
) -> None:
    fix = beta_with_fix(fleet)
    fleet.builder.git("push", "-q", "origin", "main", "beta")
    with GitHubStandIn(token=TOKEN, repos={REPOSITORY: fleet.origin}) as github:
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("GITHUB_REPOSITORY", REPOSITORY)
        monkeypatch.setenv("GITHUB_API_URL", github.url)
        r = fleet.cli("promote", "beta", "beta", "--sha", fix, "--pr")
        assert r.code == 0, r.err
        sent = github.requests[-1].json
    assert sent["title"].startswith(f"hotfix(beta): {fleet.c3[:7]}..{fix[:7]}")
    assert f"Ships the hotfix `{fix[:7]}` of channel `beta`" in sent["body"]
    assert "Fix the worker pool" in sent["body"]
    branch = f"clmgit/hotfix-beta-canary+default-{fix[:7]}"
    assert fleet.builder.git("--git-dir", str(fleet.origin), "rev-parse", branch)


def test_sync_branches_pushes_the_merge_and_its_record_together(fleet: Fleet) -> None:
    fix, c4 = hotfixed_beta_and_dev_moved_on(fleet)
    fleet.builder.git("push", "-q", "origin", "main", "beta", "dev")
    r = fleet.cli("sync-branches", "--push")
    assert r.code == 0, r.err

    def origin(ref: str) -> str:
        return fleet.builder.git("--git-dir", str(fleet.origin), "rev-parse", ref)

    assert origin("dev") == fleet.branch("dev") != c4
    assert origin("main") == fleet.branch("main")
    subject = fleet.builder.git("--git-dir", str(fleet.origin), "log", "-1", "--format=%s",
                                "main")
    assert subject == f"sync(dev): merged hotfix {fix[:7]} of beta into dev"


@needs_ssh_keygen
def test_a_hotfix_into_a_channel_taking_signed_commits_must_be_signed(
    fleet: Fleet, tmp_path: Path,
) -> None:
    unsigned = beta_with_fix(fleet)
    ada = keygen(tmp_path / "ada", "ada")
    beta = fleet.file("channels/beta.yaml").replace("  soak: 2h",
                                                    "  soak: 2h\n  signed_source: true")
    fleet.builder.commit("main", {
        ".clmgit/allowed_signers": f"ada@example.org {ada.with_suffix('.pub').read_text()}",
        "clmgit.yaml": "signing:\n  allowed_signers: .clmgit/allowed_signers\n",
        "channels/beta.yaml": beta}, "beta takes signed commits")
    r = fleet.cli("promote", "beta", "beta", "--sha", unsigned)
    assert r.code == 1
    assert f"{unsigned[:7]} by Ada Platform <ada@example.org>: it is not signed" in r.err
    signed = signed_commit(fleet, "beta", ada, "cluster/stack.yaml", "v: 3\nfixed: true\n")
    r = fleet.cli("promote", "beta", "beta", "--sha", signed)
    assert r.code == 0, r.err
    assert pins(fleet, "beta") == {"canary": signed, "default": signed}
