"""The GitHub REST client against the stand-in: retries, bounded; errors in one sentence; the
repository from the environment or the origin URL; the PR body cut to GitHub's limit."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest
import urllib3
from clmgit_sandbox.github import GitHubStandIn

from clmgit.adapters.github import BODY_LIMIT, GitHub, GitHubError, resolve_repository
from clmgit.promotion.pr import cut_body

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


# --- GitHub's shapes and the client's answers to them ---------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def gitrepo(tmp_path: Path) -> Path:
    """A real repository: main, and `feature` one commit ahead of it, plus bases b1 and b2."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for cfg in (("user.name", "t"), ("user.email", "t@example.invalid")):
        _git(repo, "config", *cfg)
    _git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    _git(repo, "branch", "b1")
    _git(repo, "branch", "b2")
    _git(repo, "checkout", "-q", "-b", "feature")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "change")
    return repo


@pytest.fixture
def real(gitrepo: Path):
    with GitHubStandIn(token=TOKEN, repos={REPO: gitrepo}, renamed={"acme/old": REPO}) as s:
        yield s


def test_the_three_403s_are_told_apart(real: GitHubStandIn) -> None:
    now = 1_700_000_000.0
    sleeps: list[float] = []
    gh = GitHub(token=TOKEN, api_url=real.url, sleep=sleeps.append, clock=lambda: now)
    real.fail_next(403, "GitHub Actions is not permitted to create or approve pull requests.")
    with pytest.raises(GitHubError, match="Allow GitHub Actions to create and approve"):
        gh.create_pull(REPO, head="feature", base="main", title="t", body="b")
    real.fail_next(403, "Resource not accessible by integration")
    with pytest.raises(GitHubError, match="needs contents and pull-requests write") as e:
        gh.open_pull(REPO, branch="feature")
    assert "Allow GitHub Actions" not in str(e.value) and sleeps == []
    # The primary rate limit: waited out until just after its reset, then the request succeeds.
    limit = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(now) + 30)}
    real.fail_next(403, "API rate limit exceeded for installation.", headers=limit)
    assert gh.open_pull(REPO, branch="feature") is None
    assert sleeps == [31.0]
    # A reset too far away is not waited for: one sentence saying when.
    far = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(now) + 3600)}
    real.fail_next(403, "API rate limit exceeded for installation.", headers=far)
    with pytest.raises(GitHubError, match=r"rate limit is used up .* resets at \d\d:\d\d:\d\d UTC"):
        gh.open_pull(REPO, branch="feature")
    assert sleeps == [31.0]


def test_a_create_whose_answer_was_lost_finds_and_updates_the_pull(real: GitHubStandIn) -> None:
    sleeps: list[float] = []
    gh = client(real.url, sleeps)
    real.lose_next_answer("POST")  # GitHub opened it, but the answer never arrived
    pull = gh.create_pull(REPO, head="feature", base="main", title="second try", body="b2")
    assert pull.number == 1 and pull.base == "main" and pull.head == "feature"
    assert len(real.pulls) == 1 and real.pulls[1]["title"] == "second try"
    assert [(r.method, r.path) for r in real.requests] == [
        ("POST", f"/repos/{REPO}/pulls"),
        ("POST", f"/repos/{REPO}/pulls"),  # the retry meets 422 "already exists"
        ("GET", f"/repos/{REPO}/pulls"),
        ("PATCH", f"/repos/{REPO}/pulls/1"),
    ]
    assert real.requests[2].query["base"] == "main" and sleeps == [1.0]


def test_another_422_on_create_is_not_taken_for_already_exists(real: GitHubStandIn) -> None:
    with pytest.raises(GitHubError, match="No commits between main and main"):
        client(real.url, []).create_pull(REPO, head="main", base="main", title="t", body="b")
    assert [r.method for r in real.requests] == ["POST"]


def test_lookup_filters_by_base_and_follows_every_page(real: GitHubStandIn) -> None:
    gh = GitHub(token=TOKEN, api_url=real.url, sleep=lambda s: None, per_page=1)
    for base in ("b1", "main", "b2"):  # one head into three bases: GitHub allows it
        gh.create_pull(REPO, head="feature", base=base, title=base, body="")
    real.pulls[1]["state"] = "closed"
    found = gh.open_pull(REPO, branch="feature", base="main")
    assert found is not None and found.base == "main" and found.number == 2
    assert gh.open_pull(REPO, branch="feature", base="b1") is None  # closed
    real.requests.clear()
    every = gh.list_pulls(REPO, branch="feature", state="all")
    assert [p.number for p in every] == [1, 2, 3]
    assert [r.query.get("page") for r in real.requests] == [None, "2", "3"]


def test_a_renamed_repository_is_followed(real: GitHubStandIn) -> None:
    gh = client(real.url, [])
    assert gh.open_pull("acme/old", branch="feature") is None  # 301, then the new name
    pull = gh.create_pull("acme/old", head="feature", base="main", title="t", body="b")  # 307
    assert pull.number == 1 and real.pulls[1]["repo"] == REPO
    assert [(r.method, r.path.split("/pulls")[0]) for r in real.requests] == [
        ("GET", "/repos/acme/old"),
        ("GET", f"/repos/{REPO}"),
        ("POST", "/repos/acme/old"),
        ("POST", f"/repos/{REPO}"),
    ]
    assert real.requests[3].json["title"] == "t"  # 307 keeps the method and the body


def _raw(real: GitHubStandIn, method: str, path: str, body: object = None):
    http = urllib3.PoolManager(retries=False)
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/vnd.github+json"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    data = json.dumps(body).encode() if body is not None else None
    resp = http.request(method, real.url + path, body=data, headers=headers, redirect=False)
    return resp.status, json.loads(resp.data), resp.headers


def test_stand_in_answers_in_githubs_shapes(real: GitHubStandIn) -> None:
    fields = {"title": "t", "head": "acme:feature", "base": "main", "body": "b"}
    status, pull, _ = _raw(real, "POST", f"/repos/{REPO}/pulls", fields)
    assert status == 201
    required = {
        "id",
        "node_id",
        "url",
        "html_url",
        "number",
        "state",
        "locked",
        "title",
        "user",
        "body",
        "created_at",
        "updated_at",
        "closed_at",
        "merged_at",
        "head",
        "base",
        "draft",
    }
    assert required <= set(pull)
    for end in ("head", "base"):
        assert {"label", "ref", "sha", "user", "repo"} <= set(pull[end])
    assert pull["head"]["label"] == "acme:feature" and pull["base"]["repo"]["full_name"] == REPO
    # Errors carry message and documentation_url; a foreign owner's head and a missing base fail.
    for bad in ({**fields, "head": "mallory:feature"}, {**fields, "base": "nope"}):
        status, err, _ = _raw(real, "POST", f"/repos/{REPO}/pulls", bad)
        assert status == 422 and err["message"] == "Validation Failed"
        assert err["documentation_url"].startswith("https://docs.github.com/")
        assert err["errors"][0]["code"] == "invalid"
    status, err, _ = _raw(real, "GET", f"/repos/{REPO}/pulls?head=feature")
    assert status == 422  # the head filter wants owner:branch
    status, _, headers = _raw(real, "GET", f"/repos/{REPO}/pulls?state=all&per_page=1")
    assert status == 200 and headers.get("Link") is None  # one pull request: one page
    _raw(real, "POST", f"/repos/{REPO}/pulls", {**fields, "base": "b1"})
    status, page, headers = _raw(real, "GET", f"/repos/{REPO}/pulls?state=all&per_page=1")
    assert len(page) == 1 and 'rel="next"' in headers["Link"] and 'rel="last"' in headers["Link"]
