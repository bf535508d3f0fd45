"""The GitHub REST API, as much of it as promotion pull requests need: find, open, update a PR.

The only module that talks to GitHub. Every failure becomes a `GitHubError` with one sentence;
the token is sent in a header and scrubbed from anything that could be printed. Server errors
and secondary rate limits are retried a bounded number of times with backoff.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict
from urllib.parse import quote, urlsplit

import urllib3

from clmgit.errors import ClmgitError

DEFAULT_API_URL = "https://api.github.com"
#: GitHub refuses a pull request body longer than this many characters.
BODY_LIMIT = 65536
ATTEMPTS = 4
#: Never wait longer than this for one retry, whatever Retry-After asks for.
MAX_WAIT_SECONDS = 60.0
_REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class GitHubError(ClmgitError):
    """GitHub refused a request or could not be reached."""


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
        attempts: int = ATTEMPTS,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float = 30.0,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self._token = token
        self._attempts = attempts
        self._sleep = sleep
        self._http = urllib3.PoolManager(timeout=urllib3.Timeout(total=timeout), retries=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GitHub:
        token = env.get("GITHUB_TOKEN", "").strip()
        if not token:
            raise GitHubError(
                "GITHUB_TOKEN is not set; a token with contents and pull-requests write access "
                "is needed to open a pull request"
            )
        return cls(token=token, api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL)

    def open_pull(self, repo: str, *, branch: str) -> PullRequest | None:
        """The open pull request whose head is `branch` of `repo` itself, if there is one."""
        owner = repo.split("/")[0]
        query = f"head={quote(f'{owner}:{branch}', safe='')}&state=open"
        found = self._request("GET", f"/repos/{repo}/pulls?{query}")
        return _pull(found[0]) if found else None

    def create_pull(self, repo: str, *, head: str, base: str, title: str, body: str) -> PullRequest:
        fields = {"title": title, "head": head, "base": base, "body": body}
        return _pull(self._request("POST", f"/repos/{repo}/pulls", fields))

    def update_pull(self, repo: str, number: int, *, title: str, body: str) -> PullRequest:
        fields = {"title": title, "body": body}
        return _pull(self._request("PATCH", f"/repos/{repo}/pulls/{number}", fields))

    def _request(self, method: str, path: str, fields: Mapping[str, Any] | None = None) -> Any:
        body = json.dumps(fields).encode() if fields is not None else None
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "clmgit",
        }
        if body is not None:
            headers["Content-Type"] = "application/json"
        for attempt in range(1, self._attempts + 1):
            try:
                resp = self._http.request(
                    method, self.api_url + path, body=body, headers=headers, redirect=False
                )
            except urllib3.exceptions.HTTPError as e:
                raise GitHubError(
                    self._scrub(f"cannot reach the GitHub API at {self.api_url}: {_reason(e)}")
                ) from None
            wait = retry_delay(resp.status, resp.headers, attempt)
            if wait is None or attempt == self._attempts:
                break
            self._sleep(wait)
        if resp.status >= 300:
            raise GitHubError(self._scrub(self._explain(method, path, resp)))
        return json.loads(resp.data or b"null")

    def _explain(self, method: str, path: str, resp: urllib3.BaseHTTPResponse) -> str:
        detail = _message(resp.data)
        where = f"{method} {path.split('?')[0]}"
        if resp.status == 401:
            return f"GitHub refused the token (401 {detail}); check GITHUB_TOKEN"
        if resp.status == 403:
            return (
                f"GitHub denied {where} (403 {detail}); the token needs contents and "
                "pull-requests write access"
            )
        if resp.status == 404:
            return f"GitHub has no {where} (404), or the token cannot see that repository"
        if resp.status == 422:
            return f"GitHub refused {where} (422 {detail})"
        return f"GitHub answered {where} with {resp.status} {detail}; try again later"

    def _scrub(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text


def retry_delay(status: int, headers: Mapping[str, str], attempt: int) -> float | None:
    """Seconds to wait before retrying, or None if the answer is final.

    Retried: server errors, and 403/429 that carry Retry-After (GitHub's secondary rate limits).
    """
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
