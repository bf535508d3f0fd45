"""Promotion of two config sources together, with real repositories and bare origins: both pins
move in one commit of the control branch, a gate refused in one source refuses the whole
promotion, `--sha source=sha` picks one source's commit."""

from __future__ import annotations

import yaml
from clmgit_sandbox.configrepo import cluster_record

from tests.helpers.cli import run_cli
from tests.helpers.sources import TwoSources, two_sources

MAIN_TREE = {"cluster/stack.yaml": "v: 1\n"}
ADDONS_TREE = {"cluster/manifests/app/cm.yaml": "kind: ConfigMap\n"}


def _records(applied: str) -> list[dict[str, object]]:
    status = {"current_version": applied, "last_version": "", "next_version": "",
              "problems": []}
    return [
        cluster_record("aws:1:eu-central-1:dev-1", channel="dev", status=status),
        cluster_record("aws:1:eu-central-1:beta-canary", channel="beta", alias="b-canary"),
        cluster_record("aws:1:eu-central-1:beta-1", channel="beta"),
    ]


def _repos(tmp_path) -> TwoSources:
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=[])
    repos.main.commit("dev", {"cluster/stack.yaml": "v: 2\n"}, "Main v2")
    repos.addons.commit("dev", {"cluster/manifests/app/cm.yaml": "kind: Secret\n"}, "Addons v2")
    return repos


def _cli(repos: TwoSources, *args: str):
    return run_cli("--repo", str(repos.main.path), *args)


def _control_commits(repos: TwoSources) -> list[str]:
    return repos.main.git("rev-list", "main").split()


def test_promote_moves_both_pins_in_one_commit(tmp_path) -> None:
    repos = _repos(tmp_path)
    main, addons = repos.sha("main", "dev"), repos.sha("addons", "dev")
    repos.set_clusters(_records(f"main={main};addons={addons}#h"))
    before = _control_commits(repos)

    result = _cli(repos, "promote", "dev", "beta")

    assert result.code == 0, result.err
    after = _control_commits(repos)
    assert len(after) == len(before) + 1
    subject = repos.main.git("log", "-1", "--format=%s", "main")
    assert subject == (f"promote(beta): dev main none..{main[:7]}, addons none..{addons[:7]} "
                       "[canary,default]")
    body = repos.main.git("log", "-1", "--format=%b", "main")
    assert f"Clmgit-Sha: main={main};addons={addons}" in body
    text = (repos.main.path / "channels/beta.yaml").read_text()
    assert text.startswith("# beta: pinned per group\n")
    assert "  - name: default   # the rest\n" in text
    groups = yaml.safe_load(text)["groups"]
    assert [g["sha"] for g in groups] == [{"main": main, "addons": addons}] * 2
    # Every group at the pins: each source's beta branch follows, in its own repository.
    assert repos.sha("main", "beta") == main
    assert repos.sha("addons", "beta") == addons

    again = _cli(repos, "promote", "dev", "beta")
    assert again.code == 0, again.err
    assert "already at" in again.out
    assert _control_commits(repos) == after


def test_a_gate_refused_in_one_source_refuses_the_whole_promotion(tmp_path) -> None:
    repos = _repos(tmp_path)
    main = repos.sha("main", "dev")
    old_addons = repos.sha("addons", "dev~1")
    repos.set_clusters(_records(f"main={main};addons={old_addons}#h"))
    before = _control_commits(repos)
    beta = (repos.main.path / "channels/beta.yaml").read_text()

    result = _cli(repos, "promote", "dev", "beta")

    assert result.code == 1
    assert "source 'addons'" in result.err
    assert "1 of 1 clusters of 'dev' have not applied" in result.err
    assert "source 'main'" not in result.err
    assert _control_commits(repos) == before
    assert (repos.main.path / "channels/beta.yaml").read_text() == beta
    assert repos.sha("addons", "beta") == old_addons


def test_sha_option_names_the_source(tmp_path) -> None:
    repos = _repos(tmp_path)
    main = repos.sha("main", "dev")
    old_addons = repos.sha("addons", "dev~1")
    repos.set_clusters(_records(f"main={main};addons={old_addons}#h"))

    result = _cli(repos, "promote", "dev", "beta", "--group", "canary",
                  "--sha", f"addons={old_addons[:10]}")

    assert result.code == 0, result.err
    groups = yaml.safe_load((repos.main.path / "channels/beta.yaml").read_text())["groups"]
    assert groups[0]["sha"] == {"main": main, "addons": old_addons}
    assert "sha" not in groups[1]
    # Not every group is at the pins: no branch moves.
    assert repos.sha("addons", "beta") == old_addons


def test_forward_only_is_judged_per_source(tmp_path) -> None:
    repos = _repos(tmp_path)
    main, addons = repos.sha("main", "dev"), repos.sha("addons", "dev")
    repos.set_clusters(_records(f"main={main};addons={addons}#h"))
    assert _cli(repos, "promote", "dev", "beta").code == 0
    old_addons = repos.sha("addons", "dev~1")

    result = _cli(repos, "promote", "dev", "beta", "--sha", f"addons={old_addons}",
                  "--force", "--dry-run")
    refused = _cli(repos, "promote", "dev", "beta", "--sha", f"addons={old_addons}")

    assert refused.code == 1
    assert f"source 'addons': {old_addons[:7]} does not contain the pins" in refused.err
    assert result.code == 0, result.err
    assert "override --force: source 'addons'" in result.err


def test_bad_sha_options_are_one_sentence(tmp_path) -> None:
    repos = _repos(tmp_path)
    dev = repos.sha("main", "dev")
    repos.set_clusters(_records(""))

    bare = _cli(repos, "promote", "dev", "beta", "--sha", dev)
    unknown = _cli(repos, "promote", "dev", "beta", "--sha", f"extras={dev}")

    assert bare.code == 1
    assert "name the source, as source=sha (sources: main, addons)" in bare.err
    assert unknown.code == 1
    assert "unknown config source 'extras'" in unknown.err


def test_groups_before_waits_for_the_canary_in_every_source(tmp_path) -> None:
    channels = {"channels/dev.yaml": "channel: dev\n",
                "channels/beta.yaml": (
                    "channel: beta\nsource: dev\ngates:\n  groups_before: applied\ngroups:\n"
                    "  - name: canary\n    selector: {alias: \"*-canary\"}\n"
                    "  - name: default\n")}
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=[],
                        channels=channels)
    main, addons = repos.sha("main", "dev"), repos.sha("addons", "dev")
    half = {"current_version": f"main={main};addons={repos.sha('addons', 'dev~1')}#h"}
    repos.set_clusters([
        cluster_record("aws:1:eu-central-1:b-canary", channel="beta", alias="b-canary",
                       status=half),
        cluster_record("aws:1:eu-central-1:beta-1", channel="beta")])
    assert _cli(repos, "promote", "dev", "beta", "--group", "canary").code == 0

    refused = _cli(repos, "promote", "dev", "beta", "--group", "default")
    repos.set_clusters([
        cluster_record("aws:1:eu-central-1:b-canary", channel="beta", alias="b-canary",
                       status={"current_version": f"main={main};addons={addons}#h"}),
        cluster_record("aws:1:eu-central-1:beta-1", channel="beta")])
    allowed = _cli(repos, "promote", "dev", "beta", "--group", "default")

    assert refused.code == 1
    assert "1 cluster(s) of the groups before it have not: b-canary" in refused.err
    assert allowed.code == 0, allowed.err
