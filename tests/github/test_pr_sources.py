"""`promote --pr` with two config sources: the pull request proposes the pin of both sources in
one commit of the control branch, its body lists each source's commits (real repositories with
bare origins, the GitHub API stand-in)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from clmgit_sandbox.configrepo import cluster_record
from clmgit_sandbox.github import GitHubStandIn

from tests.helpers.cli import run_cli
from tests.helpers.github import REPOSITORY, TOKEN
from tests.helpers.sources import two_sources


def test_a_pull_request_pins_both_sources(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    repos = two_sources(tmp_path, main_tree={"cluster/stack.yaml": "v: 1\n"},
                        addons_tree={"cluster/manifests/cm.yaml": "kind: ConfigMap\n"},
                        records=[])
    repos.main.commit("dev", {"cluster/stack.yaml": "v: 2\n"}, "Main v2")
    repos.addons.commit("dev", {"cluster/manifests/cm.yaml": "kind: Secret\n"}, "Addons v2")
    main, addons = repos.sha("main", "dev"), repos.sha("addons", "dev")
    repos.set_clusters([cluster_record("aws:1:eu-central-1:dev-1", channel="dev", status={
        "current_version": f"main={main};addons={addons}#h"})])
    for b in (repos.main, repos.addons):
        b.git("push", "--quiet", "--all", "origin")

    with GitHubStandIn(token=TOKEN, repos={REPOSITORY: repos.main_origin}) as github:
        for key, value in (("GITHUB_TOKEN", TOKEN), ("GITHUB_REPOSITORY", REPOSITORY),
                           ("GITHUB_API_URL", github.url)):
            monkeypatch.setenv(key, value)
        r = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta", "--pr")

        assert r.code == 0, r.err
        branch = f"clmgit/promote-beta-canary+default-main-{main[:7]}-addons-{addons[:7]}"
        text = subprocess.run(["git", "--git-dir", str(repos.main_origin), "show",
                               f"{branch}:channels/beta.yaml"], capture_output=True, text=True,
                              check=True).stdout
        assert [g["sha"] for g in yaml.safe_load(text)["groups"]] == [
            {"main": main, "addons": addons}] * 2
        body = github.requests[-1].json["body"]
        assert "main: Main v2" in body and "addons: Addons v2" in body
