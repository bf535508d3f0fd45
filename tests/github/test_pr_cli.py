"""`promote --pr` / `rollback --pr` through the real CLI, a real repo with a bare origin, and the
GitHub API stand-in checking every request."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from clmgit_sandbox.github import GitHubStandIn

from tests.helpers.fleet import Fleet, default_records
from tests.helpers.github import REPOSITORY, TOKEN
from tests.helpers.promotion import applied


def origin_git(fleet: Fleet, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(fleet.origin), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def origin_branches(fleet: Fleet) -> dict[str, str]:
    out = origin_git(fleet, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
    return dict(line.split(" ") for line in out.splitlines())


def ready(fleet: Fleet) -> None:
    """Every dev cluster runs c3 (so alpha's gate passes), and origin has it all."""
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    fleet.builder.git("push", "--quiet", "origin", "main")


def someone_else_pushes_main(fleet: Fleet, tmp_path: Path, name: str) -> str:
    other = tmp_path / name
    subprocess.run(["git", "clone", "--quiet", str(fleet.origin), str(other)], check=True)
    ident = ["-c", "user.name=Bo", "-c", "user.email=bo@example.org"]
    (other / "NOTES.md").write_text(f"{name}\n")
    subprocess.run(["git", "-C", str(other), "add", "NOTES.md"], check=True)
    subprocess.run(["git", "-C", str(other), *ident, "commit", "-qm", f"Notes {name}"], check=True)
    subprocess.run(["git", "-C", str(other), "push", "--quiet", "origin", "main"], check=True)
    return origin_git(fleet, "rev-parse", "main")


def calls(github: GitHubStandIn) -> list[str]:
    return [f"{r.method} {r.path}" for r in github.requests]


def test_pr_opened_with_one_commit_on_the_remote_base(
    fleet: Fleet, github: GitHubStandIn, tmp_path: Path
) -> None:
    ready(fleet)
    base = someone_else_pushes_main(fleet, tmp_path, "other")  # local main is now behind
    main, alpha = fleet.branch("main"), fleet.branch("alpha")
    r = fleet.cli("promote", "dev", "alpha", "--pr")
    assert r.code == 0, r.err
    branch = f"clmgit/promote-alpha-default-{fleet.c3[:7]}"
    head = origin_branches(fleet)[branch]
    assert origin_git(fleet, "rev-list", f"main..{branch}").split() == [head]
    assert origin_git(fleet, "rev-parse", f"{branch}^") == base
    changed = origin_git(fleet, "diff-tree", "--no-commit-id", "--name-only", "-r", head)
    assert changed.split() == ["channels/alpha.yaml"]
    pinned = yaml.safe_load(origin_git(fleet, "show", f"{branch}:channels/alpha.yaml"))
    assert pinned["groups"][0]["sha"] == fleet.c3
    subject = origin_git(fleet, "log", "-1", "--format=%s", head)
    assert subject == f"promote(alpha): dev none..{fleet.c3[:7]} [default]"

    assert calls(github) == [
        f"GET /repos/{REPOSITORY}/pulls",
        f"POST /repos/{REPOSITORY}/pulls",
    ]
    assert github.requests[0].query == {
        "head": f"acme:{branch}",
        "state": "open",
        "per_page": "100",
        "base": "main",
    }
    sent = github.requests[1].json
    assert (sent["head"], sent["base"], sent["title"]) == (branch, "main", subject)
    assert "Raise the version to 3" in sent["body"] and "Docs only" not in sent["body"]
    assert "sync-branches" in sent["body"]

    assert fleet.branch("main") == main and fleet.branch("alpha") == alpha
    assert origin_branches(fleet)["alpha"] == fleet.c1
    assert "opened pull request #1" in r.out and "sync-branches --push" in r.out


def test_second_run_updates_the_same_pr_and_moves_the_branch_with_the_base(
    fleet: Fleet, github: GitHubStandIn, tmp_path: Path
) -> None:
    ready(fleet)
    assert fleet.cli("promote", "dev", "alpha", "--pr").code == 0
    branch = f"clmgit/promote-alpha-default-{fleet.c3[:7]}"
    first = origin_branches(fleet)[branch]

    r = fleet.cli("promote", "dev", "alpha", "--pr")  # nothing moved: the branch is kept
    assert r.code == 0, r.err
    assert origin_branches(fleet)[branch] == first and "already holds" in r.out

    base = someone_else_pushes_main(fleet, tmp_path, "later")
    r = fleet.cli("promote", "dev", "alpha", "--pr")
    assert r.code == 0, r.err
    moved = origin_branches(fleet)[branch]
    assert moved != first and origin_git(fleet, "rev-parse", f"{moved}^") == base
    assert calls(github).count(f"POST /repos/{REPOSITORY}/pulls") == 1
    assert calls(github)[-1] == f"PATCH /repos/{REPOSITORY}/pulls/1"
    assert set(github.requests[-1].json) == {"title", "body"}
    assert len(github.pulls) == 1 and "updated pull request #1" in r.out


def test_rollback_pr_names_its_branch_and_what_it_takes_back(
    fleet: Fleet, github: GitHubStandIn
) -> None:
    ready(fleet)
    assert fleet.cli("promote", "dev", "alpha", "--sha", fleet.c2, "--push").code == 0
    assert fleet.cli("promote", "dev", "alpha", "--push").code == 0
    r = fleet.cli("rollback", "alpha", "--pr")
    assert r.code == 0, r.err
    branch = f"clmgit/rollback-alpha-default-{fleet.c2[:7]}"
    assert branch in origin_branches(fleet)
    sent = github.requests[-1].json
    assert sent["title"].startswith(f"rollback(alpha): {fleet.c3[:7]}..{fleet.c2[:7]}")
    assert "1 commit(s) to `cluster/` (not forward: a rollback" in sent["body"]
    assert "Raise the version to 3" in sent["body"]


def test_dry_run_calls_nothing(fleet: Fleet, github: GitHubStandIn) -> None:
    ready(fleet)
    before = origin_branches(fleet)
    r = fleet.cli("promote", "dev", "alpha", "--pr", "--dry-run")
    assert r.code == 0, r.err
    assert "would push clmgit/promote-alpha-" in r.out and "GitHub not called" in r.out
    assert github.requests == [] and origin_branches(fleet) == before


def test_no_token_refuses_before_anything_is_pushed(
    fleet: Fleet, github: GitHubStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready(fleet)
    monkeypatch.delenv("GITHUB_TOKEN")
    before = origin_branches(fleet)
    r = fleet.cli("promote", "dev", "alpha", "--pr")
    assert r.code == 1 and r.err.count("\n") == 1 and "GITHUB_TOKEN is not set" in r.err
    assert github.requests == [] and origin_branches(fleet) == before


def test_no_repository_is_one_line(
    fleet: Fleet, github: GitHubStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready(fleet)
    monkeypatch.delenv("GITHUB_REPOSITORY")  # and origin is a local path, not a GitHub URL
    r = fleet.cli("promote", "dev", "alpha", "--pr")
    assert r.code == 1 and r.err.count("\n") == 1 and "GITHUB_REPOSITORY" in r.err


def test_api_422_is_one_line_and_the_token_never_shows(fleet: Fleet, github: GitHubStandIn) -> None:
    ready(fleet)
    github.fail_next(422, "Validation Failed", method="POST")
    r = fleet.cli("promote", "dev", "alpha", "--pr")
    assert r.code == 1, r.out
    assert r.err.startswith("error: GitHub refused POST") and "422" in r.err
    assert r.err.count("\n") == 1
    r = fleet.cli("--verbose", "promote", "dev", "alpha", "--pr")  # traceback and debug logs
    assert r.code == 0, r.err
    assert TOKEN not in r.out + r.err


def test_bad_token_is_refused_by_github_and_not_echoed(
    fleet: Fleet, github: GitHubStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready(fleet)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_wrongTokenNeverPrinted")
    r = fleet.cli("--verbose", "promote", "dev", "alpha", "--pr")
    assert r.code == 1 and "401" in r.err and "GITHUB_TOKEN" in r.err
    assert "ghp_wrongTokenNeverPrinted" not in r.out + r.err
    assert not any(b.startswith("clmgit/") for b in origin_branches(fleet))


def test_push_and_pr_exclude_each_other(fleet: Fleet, github: GitHubStandIn) -> None:
    r = fleet.cli("promote", "dev", "alpha", "--pr", "--push")
    assert r.code == 2 and "exclude each other" in r.err
    assert github.requests == []


def test_json_output_names_the_pull_request(fleet: Fleet, github: GitHubStandIn) -> None:
    import json

    ready(fleet)
    r = fleet.cli("promote", "dev", "alpha", "--pr", "--output", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)["result"]
    assert data["outcome"] == "pull-request" and data["pull_request"]["number"] == 1
    assert data["branch"] == f"clmgit/promote-alpha-default-{fleet.c3[:7]}"
    assert data["created"] is True


def test_pr_from_a_repo_given_as_url(fleet: Fleet, github: GitHubStandIn,
                                     monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A URL repo is a mirror in the cache: the pull request's branch lands on the remote, and a
    second run finds it there and pushes nothing new."""
    from tests.helpers.cli import run_cli
    ready(fleet)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    url = f"file://{fleet.origin}"
    args = ("--repo", url, "--registry", str(fleet.path / "clusters.yaml"),
            "promote", "dev", "alpha", "--pr", "--output", "json")
    first = run_cli(*args)
    assert first.code == 0, first.err
    branch = f"clmgit/promote-alpha-default-{fleet.c3[:7]}"
    head = origin_branches(fleet)[branch]
    assert origin_git(fleet, "rev-parse", f"{branch}^") == origin_git(fleet, "rev-parse", "main")
    again = run_cli(*args)
    assert again.code == 0, again.err
    assert origin_branches(fleet)[branch] == head
    import json

    assert (json.loads(first.out)["result"]["created"],
            json.loads(again.out)["result"]["created"]) == (True, False)
    assert calls(github)[-1] == f"PATCH /repos/{REPOSITORY}/pulls/1"
