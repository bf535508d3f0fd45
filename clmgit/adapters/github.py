"""The GitHub REST API, as much of it as promotion pull requests need: find, open, update a PR.

The only module that talks to GitHub. Every failure becomes a `GitHubError` with one sentence;
the token is sent in a header and scrubbed from anything that could be printed. Server errors,
lost answers and secondary rate limits are retried a bounded number of times with backoff; the
primary rate limit is waited out until its reset when that is near. The three 403s GitHub gives
(a missing permission, the repository setting that keeps Actions from creating pull requests,
a rate limit) are told apart. A renamed repository's redirect is followed, list answers are
read page by page through their `Link` headers, and a create whose answer was lost and whose
retry meets "already exists" finds that pull request and updates it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict
from urllib.parse import quote, urljoin, urlsplit

import urllib3

from clmgit.errors import ClmgitError

DEFAULT_API_URL = "https://api.github.com"
#: GitHub refuses a pull request body longer than this many characters.
BODY_LIMIT = 65536
ATTEMPTS = 4
#: Seconds one request may take in all.
TIMEOUT = 30.0
#: Never wait longer than this for one retry, whatever Retry-After asks for.
MAX_WAIT_SECONDS = 60.0
#: Wait for the primary rate limit's reset only if it comes within this many seconds.
MAX_RATE_LIMIT_WAIT_SECONDS = 300.0
#: Redirects followed per request (a renamed or transferred repository answers with one).
MAX_REDIRECTS = 3
PER_PAGE = 100
_NEXT_LINK = re.compile(r'<(?P<url>[^>]+)>;\s*rel="next"')
_ACTIONS_SETTING = "not permitted to create or approve pull requests"
_REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class GitHubError(ClmgitError):
    """GitHub refused a request or could not be reached."""

    def __init__(self, message: str, *, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


class PullPayload(TypedDict, total=False):
    """The fields of GitHub's pull request object that clmgit reads."""

    number: int
    html_url: str
    state: str
    title: str
    body: str | None
    head: dict[str, Any]
    base: dict[str, Any]


@dataclass(frozen=True)
class PullRequest:
    number: int
    url: str
    head: str
    base: str


def _pull(payload: PullPayload) -> PullRequest:
    return PullRequest(
        number=int(payload["number"]),
        url=str(payload.get("html_url", "")),
        head=str(payload.get("head", {}).get("ref", "")),
        base=str(payload.get("base", {}).get("ref", "")),
    )


def repository_from_url(url: str) -> str | None:
    """`owner/name` of a GitHub remote URL (https, ssh:// or scp-like `git@host:o/r.git`)."""
    scp = re.match(r"^[\w.-]+@[\w.-]+:(?P<path>[^/].*)$", url)
    if scp:
        path = scp["path"]
    else:
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http", "ssh", "git") or not parts.hostname:
            return None
        path = parts.path
    path = path.strip("/").removesuffix(".git")
    return path if _REPO_RE.match(path) else None


def resolve_repository(env: Mapping[str, str], origin_url: str | None) -> str:
    """GITHUB_REPOSITORY if set, else the repository the origin URL names."""
    named = env.get("GITHUB_REPOSITORY", "").strip()
    if named:
        if not _REPO_RE.match(named):
            raise GitHubError(f"GITHUB_REPOSITORY={named!r} is not of the form owner/name")
        return named
    repo = repository_from_url(origin_url) if origin_url else None
    if repo is None:
        raise GitHubError(
            "cannot tell which GitHub repository to open the pull request in: "
            "set GITHUB_REPOSITORY=owner/name or use a GitHub URL for the origin remote"
        )
    return repo


class GitHub:
    """A small client of the REST API at `api_url` (GitHub.com or GitHub Enterprise)."""

    def __init__(
        self,
        *,
        token: str,
        api_url: str = DEFAULT_API_URL,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        per_page: int = PER_PAGE,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self._token = token
        self._sleep = sleep
        self._clock = clock
        self._per_page = per_page
        self._http = urllib3.PoolManager(timeout=urllib3.Timeout(total=TIMEOUT), retries=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GitHub:
        token = env.get("GITHUB_TOKEN", "").strip()
        if not token:
            raise GitHubError(
                "GITHUB_TOKEN is not set; a token with contents and pull-requests write access "
                "is needed to open a pull request"
            )
        return cls(token=token, api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL)

    def open_pull(self, repo: str, *, branch: str, base: str | None = None) -> PullRequest | None:
        """The open pull request from `branch` of `repo` itself (into `base`), if there is one."""
        found = self.list_pulls(repo, branch=branch, base=base, state="open")
        return found[0] if found else None

    def list_pulls(
        self, repo: str, *, branch: str, base: str | None = None, state: str = "open"
    ) -> list[PullRequest]:
        """The pull requests from `branch` of `repo` itself (into `base`), every page of them."""
        owner = repo.split("/")[0]
        query = f"head={quote(f'{owner}:{branch}', safe='')}&state={state}"
        query += f"&per_page={self._per_page}"
        if base is not None:
            query += f"&base={quote(base, safe='')}"
        pulls = [_pull(p) for p in self._pages(f"/repos/{repo}/pulls?{query}")]
        return [p for p in pulls if p.head == branch and base in (None, p.base)]

    def create_pull(self, repo: str, *, head: str, base: str, title: str, body: str) -> PullRequest:
        """Open a pull request; if a retry finds it already open (the first answer was lost),
        find it and update it instead."""
        fields = {"title": title, "head": head, "base": base, "body": body}
        try:
            return _pull(self._request("POST", f"/repos/{repo}/pulls", fields)[0])
        except GitHubError as e:
            if e.status != 422 or "already exists" not in e.detail:
                raise
            existing = self.open_pull(repo, branch=head.split(":", 1)[-1], base=base)
            if existing is None:
                raise
            return self.update_pull(repo, existing.number, title=title, body=body)

    def update_pull(self, repo: str, number: int, *, title: str, body: str) -> PullRequest:
        fields = {"title": title, "body": body}
        return _pull(self._request("PATCH", f"/repos/{repo}/pulls/{number}", fields)[0])

    def _pages(self, path: str) -> Iterator[Any]:
        """Every item of a list answer, following `Link: <…>; rel="next"` page by page."""
        url: str | None = path
        while url is not None:
            items, headers = self._request("GET", url)
            yield from items or []
            m = _NEXT_LINK.search(headers.get("Link", ""))
            url = m["url"] if m else None

    def _request(
        self, method: str, path: str, fields: Mapping[str, Any] | None = None
    ) -> tuple[Any, Mapping[str, str]]:
        """Send one request (retried, redirects followed); its JSON answer and headers."""
        body = json.dumps(fields).encode() if fields is not None else None
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "clmgit",
        }
        if body is not None:
            headers["Content-Type"] = "application/json"
        url = path if path.startswith(("http://", "https://")) else self.api_url + path
        resp: urllib3.BaseHTTPResponse | None = None
        for attempt in range(1, ATTEMPTS + 1):
            resp = self._send(method, url, body, headers, lost_ok=attempt < ATTEMPTS)
            if resp is None:  # the answer was lost: try again
                self._sleep(min(float(2 ** (attempt - 1)), MAX_WAIT_SECONDS))
                continue
            wait = retry_delay(resp.status, resp.headers, attempt, now=self._clock())
            if wait is None or attempt == ATTEMPTS:
                break
            self._sleep(wait)
        assert resp is not None  # the last attempt never returns None
        if resp.status >= 300:
            raise GitHubError(
                self._scrub(self._explain(method, path, resp)),
                status=resp.status,
                detail=_message(resp.data),
            )
        return json.loads(resp.data or b"null"), resp.headers

    def _send(
        self, method: str, url: str, body: bytes | None, headers: dict[str, str], *, lost_ok: bool
    ) -> urllib3.BaseHTTPResponse | None:
        """One attempt, following redirects within the API's own host; None if the answer was
        lost after the request may have arrived (and another attempt is allowed)."""
        for _ in range(MAX_REDIRECTS + 1):
            try:
                resp = self._http.request(
                    method, url, body=body, headers=headers, redirect=False
                )
            except urllib3.exceptions.NewConnectionError as e:
                raise GitHubError(
                    self._scrub(f"cannot reach the GitHub API at {self.api_url}: {_reason(e)}")
                ) from None
            except (urllib3.exceptions.ProtocolError, urllib3.exceptions.TimeoutError) as e:
                if lost_ok:
                    return None
                lost = f"lost the answer of the GitHub API at {self.api_url}: {_reason(e)}"
                raise GitHubError(self._scrub(lost)) from None
            except urllib3.exceptions.HTTPError as e:
                raise GitHubError(
                    self._scrub(f"cannot reach the GitHub API at {self.api_url}: {_reason(e)}")
                ) from None
            location = resp.headers.get("Location")
            if resp.status not in (301, 302, 307, 308) or not location:
                return resp
            target = urljoin(url, location)
            # The token goes only to the API's own host: a redirect elsewhere is not followed.
            if urlsplit(target).netloc != urlsplit(self.api_url).netloc:
                return resp
            if resp.status in (301, 302) and method != "GET":
                return resp  # only 307/308 keep the method and body
            url = target
        return resp

    def _explain(self, method: str, path: str, resp: urllib3.BaseHTTPResponse) -> str:
        detail = _message(resp.data)
        where = f"{method} {urlsplit(path).path}"
        if resp.status == 401:
            return f"GitHub refused the token (401 {detail}); check GITHUB_TOKEN"
        if _rate_limited(resp.status, resp.headers):
            reset = resp.headers.get("X-RateLimit-Reset", "")
            when = (
                time.strftime("%H:%M:%S UTC", time.gmtime(int(reset))) if reset.isdigit() else ""
            )
            return (
                f"GitHub's API rate limit is used up ({resp.status} {detail}); "
                f"it resets {('at ' + when) if when else 'later'}, try again then"
            )
        if resp.status == 403 and _ACTIONS_SETTING in detail:
            return (
                f"GitHub denied {where} (403 {detail}); allow it under the repository's "
                "Settings → Actions → General → \"Allow GitHub Actions to create and approve pull "
                "requests\", or use a GitHub App token"
            )
        if resp.status == 403:
            return (
                f"GitHub denied {where} (403 {detail}); the token needs contents and "
                "pull-requests write access"
            )
        if resp.status in (301, 302, 307, 308):
            return f"GitHub moved {where} ({resp.status}) to another host; not followed"
        if resp.status == 404:
            return f"GitHub has no {where} (404), or the token cannot see that repository"
        if resp.status == 422:
            return f"GitHub refused {where} (422 {detail})"
        return f"GitHub answered {where} with {resp.status} {detail}; try again later"

    def _scrub(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text


def _rate_limited(status: int, headers: Mapping[str, str]) -> bool:
    """GitHub's primary rate limit: 403 or 429 with no requests remaining."""
    return status in (403, 429) and headers.get("X-RateLimit-Remaining") == "0"


def retry_delay(status: int, headers: Mapping[str, str], attempt: int, *, now: float
                ) -> float | None:
    """Seconds to wait before retrying, or None if the answer is final.

    Retried: server errors, 403/429 that carry Retry-After (GitHub's secondary rate limits), and
    the primary rate limit (no requests remaining) if it resets soon: just after its reset.
    """
    if _rate_limited(status, headers) and headers.get("Retry-After") is None:
        reset = headers.get("X-RateLimit-Reset", "")
        if not reset.isdigit():
            return None
        wait = max(0.0, int(reset) - now) + 1.0
        return wait if wait <= MAX_RATE_LIMIT_WAIT_SECONDS else None
    retry_after = headers.get("Retry-After")
    limited = status in (403, 429) and retry_after is not None
    if not (status >= 500 or status == 429 or limited):
        return None
    backoff = float(2 ** (attempt - 1))
    if retry_after is not None and retry_after.strip().isdigit():
        backoff = float(retry_after)
    return min(backoff, MAX_WAIT_SECONDS)


def _message(data: bytes | None) -> str:
    """GitHub's own explanation of an error: `message` and the messages of `errors`."""
    try:
        payload = json.loads(data or b"")
    except ValueError:
        return ""
    if not isinstance(payload, dict):
        return ""
    parts = [str(payload.get("message", ""))]
    for err in payload.get("errors") or []:
        if isinstance(err, dict):
            err = err.get("message") or f"{err.get('field', '')} {err.get('code', '')}".strip()
        parts.append(str(err))
    return ": ".join(p for p in parts if p)[:300]


def _reason(err: urllib3.exceptions.HTTPError) -> str:
    reason = getattr(err, "reason", None) or err
    return str(reason).split(": ", 1)[-1][:200]
