"""The GitHub REST client against the stand-in: retries, bounded; errors in one sentence; the
repository from the environment or the origin URL; the PR body cut to GitHub's limit."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from clmgit.adapters.github import BODY_LIMIT, GitHub, GitHubError, resolve_repository
from clmgit.promotion.pr import cut_body
from clmgit.sandbox.github import GitHubStandIn

REPO = "acme/config"
TOKEN = "ghs_clientTestToken42"


@pytest.fixture
def server(tmp_path: Path):
    with GitHubStandIn(token=TOKEN, repos={REPO: tmp_path}) as s:
        yield s


def client(url: str, sleeps: list[float], token: str = TOKEN) -> GitHub:
    return GitHub(token=token, api_url=url, sleep=sleeps.append)


def test_server_errors_are_retried_with_backoff(server: GitHubStandIn) -> None:
    sleeps: list[float] = []
    server.fail_next(502, "Bad Gateway")
    server.fail_next(503, "Unavailable")
    assert client(server.url, sleeps).open_pull(REPO, branch="b") is None
    assert sleeps == [1.0, 2.0] and len(server.requests) == 3


def test_secondary_rate_limit_waits_as_told(server: GitHubStandIn) -> None:
    sleeps: list[float] = []
    server.fail_next(403, "You have exceeded a secondary rate limit", headers={"Retry-After": "7"})
    server.fail_next(429, "Too Many Requests", headers={"Retry-After": "600"})
    assert client(server.url, sleeps).open_pull(REPO, branch="b") is None
    assert sleeps == [7.0, 60.0]  # the wait is capped


def test_retries_are_bounded(server: GitHubStandIn) -> None:
    sleeps: list[float] = []
    for _ in range(5):
        server.fail_next(500, "boom")
    with pytest.raises(GitHubError, match=r"answered GET /repos/acme/config/pulls with 500"):
        client(server.url, sleeps).open_pull(REPO, branch="b")
    assert sleeps == [1.0, 2.0, 4.0] and len(server.requests) == 4


def test_plain_403_is_final_and_explained(server: GitHubStandIn) -> None:
    sleeps: list[float] = []
    server.fail_next(403, "Resource not accessible by integration")
    with pytest.raises(GitHubError, match="pull-requests write access") as e:
        client(server.url, sleeps).open_pull(REPO, branch="b")
    assert sleeps == [] and "\n" not in str(e.value)


def test_unknown_repository_and_bad_token(server: GitHubStandIn) -> None:
    with pytest.raises(GitHubError, match=r"has no GET /repos/acme/other/pulls \(404\)"):
        client(server.url, []).open_pull("acme/other", branch="b")
    with pytest.raises(GitHubError, match="refused the token") as e:
        client(server.url, [], token="ghp_notTheRightOne").open_pull(REPO, branch="b")
    assert "ghp_notTheRightOne" not in str(e.value)


def test_unreachable_api_is_one_sentence() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nobody listens there
    with pytest.raises(GitHubError, match="cannot reach the GitHub API") as e:
        client(f"http://127.0.0.1:{port}", []).open_pull(REPO, branch="b")
    assert "\n" not in str(e.value) and TOKEN not in str(e.value)


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme/config.git",
        "https://x-access-token:secret@github.com/acme/config",
        "git@github.com:acme/config.git",
        "ssh://git@github.example.org:2222/acme/config.git",
    ],
)
def test_repository_from_origin_url(url: str) -> None:
    assert resolve_repository({}, url) == "acme/config"


def test_repository_from_environment_wins_and_bad_input_is_refused() -> None:
    assert resolve_repository({"GITHUB_REPOSITORY": "o/r"}, "git@github.com:a/b.git") == "o/r"
    with pytest.raises(GitHubError, match="owner/name"):
        resolve_repository({"GITHUB_REPOSITORY": "not a repo"}, None)
    for origin in ("/srv/git/config.git", "file:///srv/config.git", None):
        with pytest.raises(GitHubError, match="GITHUB_REPOSITORY"):
            resolve_repository({}, origin)


def test_long_body_is_cut_at_a_line_with_a_note_and_a_closed_fence() -> None:
    report = "```diff\n" + "".join(f"+ line {i} of a long rendered change\n" for i in range(5000))
    body = cut_body("intro", report, "after the merge", limit=BODY_LIMIT)
    assert len(body) <= BODY_LIMIT
    assert "cut here to fit GitHub's limit of 65,536 characters" in body
    assert body.endswith("after the merge") and body.count("```") % 2 == 0
    kept = body.rsplit("\n```", 1)[0].splitlines()
    assert kept[-1].endswith("of a long rendered change")  # cut between lines
    assert cut_body("intro", "short", "after") == "intro\n\nshort\n\nafter"


def test_stand_in_refuses_what_github_refuses(server: GitHubStandIn) -> None:
    gh = client(server.url, [])
    with pytest.raises(GitHubError, match="422 Validation Failed: head invalid"):
        gh.create_pull(REPO, head="missing", base="main", title="t", body="b")
    with pytest.raises(GitHubError, match="404"):
        gh.update_pull(REPO, 99, title="t", body="b")
