"""A local stand-in for the part of GitHub's REST API that promotion pull requests use.

It listens on 127.0.0.1 on a free port, checks every request the way GitHub would (token, path,
query, JSON fields and their types, branches that must exist in a real bare repository, one open
pull request per head, `owner:branch` heads of the repository's own owner, an existing base) and
answers in GitHub's shapes: pull requests with the fields GitHub always sends, errors with
`message` and `documentation_url`, lists cut into pages with a `Link` header, a renamed
repository redirected (301 for GET, 307 otherwise). Every request is recorded, so tests can
assert on what clmgit sent; `fail_next` queues error answers and `lose_next_answer` handles a
request but drops the connection before answering.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from clmgit.adapters.git import run_git
from clmgit.httpd import Background, Handler

HOST = "127.0.0.1"
BODY_LIMIT = 65536
DOCS = "https://docs.github.com/rest/pulls/pulls"
_ROBOT = {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}
_PULLS = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls$")
_PULL = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<number>\d+)$")
_CREATE_FIELDS: dict[str, type] = {
    "title": str,
    "head": str,
    "base": str,
    "body": str,
    "draft": bool,
}
_UPDATE_FIELDS: dict[str, type] = {"title": str, "body": str, "state": str, "base": str}


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any


@dataclass
class _Answer:
    status: int
    payload: Any
    headers: dict[str, str] = field(default_factory=dict)
    #: Close the connection without answering (the request was handled).
    drop: bool = False


@dataclass(frozen=True)
class _Failure:
    method: str | None
    answer: _Answer


class _Refused(Exception):
    def __init__(self, status: int, message: str, errors: list[dict[str, str]] | None = None):
        super().__init__(message)
        self.answer = _Answer(status, _error(status, message, errors))


class GitHubStandIn:
    """GitHub's pulls API for repositories `owner/name` backed by real bare git repositories."""

    def __init__(
        self, *, token: str, repos: dict[str, Path], renamed: dict[str, str] | None = None
    ) -> None:
        self.token = token
        self.repos = dict(repos)
        #: Old `owner/name` → the current one, answered with a redirect.
        self.renamed = dict(renamed or {})
        self._lose: list[str | None] = []
        self.requests: list[Recorded] = []
        self.pulls: dict[int, dict[str, Any]] = {}
        self._failures: list[_Failure] = []
        self._lock = threading.Lock()
        self._served: Background | None = None

    # --- life cycle ------------------------------------------------------------------------

    def start(self) -> GitHubStandIn:
        if self._served is None:
            handler = type("Handler", (_Handler,), {"stand_in": self})
            self._served = Background(ThreadingHTTPServer((HOST, 0), handler), "github")
        return self

    def stop(self) -> None:
        if self._served is not None:
            self._served.stop()
            self._served = None

    def __enter__(self) -> GitHubStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._served is not None, "start() the stand-in first"
        return f"http://{HOST}:{self._served.port}"

    def fail_next(
        self,
        status: int,
        message: str = "",
        *,
        method: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer the next request (of `method`, if given) with this error, after its auth."""
        self._failures.append(
            _Failure(method, _Answer(status, _error(status, message, None), headers or {}))
        )

    def lose_next_answer(self, method: str | None = None) -> None:
        """Handle the next request (of `method`) fully, then drop the connection unanswered."""
        self._lose.append(method)

    # --- the API ---------------------------------------------------------------------------

    def handle(self, req: Recorded) -> _Answer:
        with self._lock:
            self.requests.append(req)
            try:
                self._check_auth(req.headers)
                for i, failure in enumerate(self._failures):
                    if failure.method in (None, req.method):
                        return self._failures.pop(i).answer
                answer = self._route(req)
            except _Refused as e:
                answer = e.answer
            for i, method in enumerate(self._lose):
                if method in (None, req.method):
                    del self._lose[i]
                    answer.drop = True
                    break
            return answer

    def _check_auth(self, headers: dict[str, str]) -> None:
        if headers.get("authorization") not in (f"Bearer {self.token}", f"token {self.token}"):
            raise _Refused(401, "Bad credentials")
        if "application/vnd.github+json" not in headers.get("accept", ""):
            raise _Refused(415, "Unsupported 'Accept' header; use application/vnd.github+json")

    def _route(self, req: Recorded) -> _Answer:
        m = _PULLS.match(req.path) or _PULL.match(req.path)
        if m and m["repo"] in self.renamed:
            return self._moved(req, m["repo"])
        if m := _PULLS.match(req.path):
            repo = self._repo(m["repo"])
            if req.method == "GET":
                return self._page(req, self._list(repo, req.query))
            if req.method == "POST":
                return _Answer(201, self._create(repo, _fields(req, _CREATE_FIELDS)))
        elif m := _PULL.match(req.path):
            repo = self._repo(m["repo"])
            pull = self.pulls.get(int(m["number"]))
            if pull is None or pull["repo"] != repo:
                raise _Refused(404, "Not Found")
            if req.method == "GET":
                return _Answer(200, _public(pull))
            if req.method == "PATCH":
                return _Answer(200, self._update(pull, _fields(req, _UPDATE_FIELDS)))
        raise _Refused(404, "Not Found")

    def _moved(self, req: Recorded, old: str) -> _Answer:
        """GitHub's answer for a renamed repository: 301 for GET, 307 (keep method) otherwise."""
        path = req.path.replace(f"/repos/{old}/", f"/repos/{self.renamed[old]}/", 1)
        query = "&".join(f"{k}={v}" for k, v in req.query.items())
        location = f"{self.url}{path}" + (f"?{query}" if query else "")
        status = 301 if req.method == "GET" else 307
        payload = {"message": "Moved Permanently", "url": location, "documentation_url": DOCS}
        return _Answer(status, payload, {"Location": location})

    def _page(self, req: Recorded, items: list[dict[str, Any]]) -> _Answer:
        """One page of a list, with GitHub's `Link` header naming the next and last pages."""
        try:
            per_page = min(int(req.query.get("per_page", "30")), 100)
            page = max(int(req.query.get("page", "1")), 1)
        except ValueError:
            raise _Refused(422, "Validation Failed", _invalid("page")) from None
        last = max((len(items) + per_page - 1) // per_page, 1)
        links = []
        for rel, number in (("next", page + 1), ("last", last)):
            if page < last:
                query = {**req.query, "page": str(number), "per_page": str(per_page)}
                url = f"{self.url}{req.path}?" + "&".join(f"{k}={v}" for k, v in query.items())
                links.append(f'<{url}>; rel="{rel}"')
        headers = {"Link": ", ".join(links)} if links else {}
        return _Answer(200, items[(page - 1) * per_page : page * per_page], headers)

    def _repo(self, name: str) -> str:
        if name not in self.repos:
            raise _Refused(404, "Not Found")
        return name

    def _list(self, repo: str, query: dict[str, str]) -> list[dict[str, Any]]:
        state = query.get("state", "open")
        if state not in ("open", "closed", "all"):
            raise _Refused(422, "Validation Failed", [{"field": "state", "code": "invalid"}])
        head, base = query.get("head"), query.get("base")
        if head is not None and ":" not in head:
            raise _Refused(422, "Validation Failed", [{"field": "head", "code": "invalid"}])
        return [
            _public(p)
            for p in self.pulls.values()
            if p["repo"] == repo
            and (state == "all" or p["state"] == state)
            and (head is None or p["head"]["label"] == head)
            and (base is None or p["base"]["ref"] == base)
        ]

    def _create(self, repo: str, fields: dict[str, Any]) -> dict[str, Any]:
        for name in ("title", "head", "base"):
            if not fields.get(name):
                raise _Refused(422, "Validation Failed", [{"field": name, "code": "missing_field"}])
        owner = repo.split("/")[0]
        head_owner, _, head = fields["head"].rpartition(":")
        if head_owner not in ("", owner):  # another owner's fork: none is known here
            raise _Refused(422, "Validation Failed", _invalid("head"))
        label = f"{owner}:{head}"
        head_sha, base_sha = self._branch(repo, head), self._branch(repo, fields["base"])
        if head_sha is None or base_sha is None:
            missing = "head" if head_sha is None else "base"
            raise _Refused(422, "Validation Failed", _invalid(missing))
        if head_sha == base_sha:
            raise _Refused(
                422,
                "Validation Failed",
                [{"message": f"No commits between {fields['base']} and {head}"}],
            )
        if any(  # GitHub allows one open pull request per head and base
            p["repo"] == repo
            and p["state"] == "open"
            and p["head"]["label"] == label
            and p["base"]["ref"] == fields["base"]
            for p in self.pulls.values()
        ):
            raise _Refused(
                422,
                "Validation Failed",
                [{"message": f"A pull request already exists for {label}."}],
            )
        _check_body(fields.get("body"))
        number = len(self.pulls) + 1
        now = _now()
        self.pulls[number] = {
            "repo": repo,
            "id": 1000 + number,
            "node_id": f"PR_standin{number}",
            "number": number,
            "state": "open",
            "locked": False,
            "title": fields["title"],
            "user": dict(_ROBOT),
            "body": fields.get("body"),
            "labels": [],
            "created_at": now,
            "updated_at": now,
            "closed_at": None,
            "merged_at": None,
            "merge_commit_sha": None,
            "draft": bool(fields.get("draft", False)),
            "author_association": "NONE",
            "head": _end(repo, head, head_sha),
            "base": _end(repo, fields["base"], base_sha),
        }
        return _public(self.pulls[number])

    def _update(self, pull: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
        if "state" in fields and fields["state"] not in ("open", "closed"):
            raise _Refused(422, "Validation Failed", [{"field": "state", "code": "invalid"}])
        _check_body(fields.get("body"))
        if "base" in fields:
            base_sha = self._branch(pull["repo"], fields.pop("base"))
            if base_sha is None:
                raise _Refused(422, "Validation Failed", _invalid("base"))
        pull.update(fields)
        pull["head"]["sha"] = self._branch(pull["repo"], pull["head"]["ref"])
        pull["updated_at"] = _now()
        return _public(pull)

    def _branch(self, repo: str, branch: str) -> str | None:
        args = ["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}"]
        return run_git(args, cwd=self.repos[repo], ok=range(256)).stdout.decode().strip() or None


def _error(status: int, message: str, errors: list[dict[str, str]] | None) -> dict[str, Any]:
    """GitHub's error body: message, documentation_url, status, and errors when it has them."""
    payload: dict[str, Any] = {"message": message, "documentation_url": DOCS, "status": str(status)}
    if errors:
        payload["errors"] = errors
    return payload


def _invalid(name: str) -> list[dict[str, str]]:
    return [{"resource": "PullRequest", "field": name, "code": "invalid"}]


def _end(repo: str, ref: str, sha: str) -> dict[str, Any]:
    """A pull request's head or base: label, ref, sha, user and repo, as GitHub sends them."""
    owner = repo.split("/")[0]
    return {
        "label": f"{owner}:{ref}",
        "ref": ref,
        "sha": sha,
        "user": {"login": owner, "type": "Organization"},
        "repo": {"full_name": repo, "name": repo.split("/")[1], "owner": {"login": owner}},
    }


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _fields(req: Recorded, allowed: dict[str, type]) -> dict[str, Any]:
    if req.headers.get("content-type", "").split(";")[0] != "application/json":
        raise _Refused(415, "Unsupported Media Type: send application/json")
    if not isinstance(req.json, dict):
        raise _Refused(400, "Problems parsing JSON")
    for name, value in req.json.items():
        if name not in allowed or not isinstance(value, allowed[name]):
            raise _Refused(422, "Validation Failed", _invalid(name))
    return dict(req.json)


def _check_body(body: str | None) -> None:
    if body is not None and len(body) > BODY_LIMIT:
        raise _Refused(
            422,
            "Validation Failed",
            [{"message": f"body is too long (maximum is {BODY_LIMIT} characters)"}],
        )


def _public(pull: dict[str, Any]) -> dict[str, Any]:
    """The pull request as GitHub shows it."""
    repo, number = pull["repo"], pull["number"]
    out = {k: v for k, v in pull.items() if k != "repo"}
    out["url"] = f"https://api.github.invalid/repos/{repo}/pulls/{number}"
    out["html_url"] = f"https://github.invalid/{repo}/pull/{number}"
    return out


class _Handler(Handler):
    stand_in: GitHubStandIn

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode(errors="replace")
        req = Recorded(
            method=self.command,
            path=parts.path,
            query=dict(parse_qsl(parts.query)),
            headers={k.lower(): v for k, v in self.headers.items()},
            json=payload,
        )
        answer = self.stand_in.handle(req)
        if answer.drop:  # handled, but the client never hears back
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        data = json.dumps(answer.payload).encode()
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


# --- standalone: `python -m clmgit_sandbox.github` ---------------------------------------------


def write_token(path: Path) -> str:
    """A fresh random token in `path` (0600), for a client to read; never printed."""
    import os
    import secrets

    token = secrets.token_hex(16)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    return token


def paste_lines(stand_in: GitHubStandIn, repository: str, token_file: Path) -> list[str]:
    """The shell lines that send `clmgit promote --pr` to the stand-in."""
    import shlex

    return [f"export GITHUB_API_URL={stand_in.url}",
            f"export GITHUB_REPOSITORY={shlex.quote(repository)}",
            f"read -r GITHUB_TOKEN < {shlex.quote(str(token_file))} && export GITHUB_TOKEN"]


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m clmgit_sandbox.github",
        description="Serve GitHub's pulls API on 127.0.0.1 for bare repositories, so that "
        "`clmgit promote --pr` can be tried locally; run until Ctrl-C. The config repo's "
        "origin must be the bare repository given here.")
    parser.add_argument("--repo", action="append", required=True, metavar="OWNER/NAME=BARE",
                        help="a repository and the bare git repository that holds it "
                        "(repeatable)")
    parser.add_argument("--token-file", required=True, metavar="FILE",
                        help="where to write the bearer token clients must send (0600)")
    args = parser.parse_args(argv)
    repos: dict[str, Path] = {}
    for spec in args.repo:
        name, eq, bare = spec.partition("=")
        if not eq or not re.fullmatch(r"[\w.-]+/[\w.-]+", name) or not Path(bare).is_dir():
            print(f"github: --repo {spec}: expected OWNER/NAME=BARE with an existing bare "
                  "repository", file=sys.stderr)
            return 1
        repos[name] = Path(bare).resolve()
    token_file = Path(args.token_file)
    with GitHubStandIn(token=write_token(token_file), repos=repos) as stand_in:
        print("The GitHub stand-in is running. Paste these lines into the shell that runs "
              "clmgit:\n")
        for line in paste_lines(stand_in, next(iter(repos)), token_file):
            print(f"  {line}")
        print("\nCtrl-C stops it.", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    print(f"Stopped; {len(stand_in.pulls)} pull request(s) were opened.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
