"""Links to the forge that hosts the config repo: GitHub (github.com, or the server GitHub
Actions names in GITHUB_SERVER_URL, such as a GitHub Enterprise host)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from clmgit.adapters.github import repository_from_url
from clmgit.urls import url_host
from clmgit.workspace import Workspace

GITHUB = "https://github.com"


def commit_url(ws: Workspace, env: Mapping[str, str] | None = None) -> str | None:
    """`<forge>/<owner>/<repo>/commit/` for the workspace's origin, or None when origin is not
    on a known forge (a commit is then shown without a link)."""
    url = ws.url or ws.origin_url()
    return forge_commit_url(url, os.environ if env is None else env) if url else None


def forge_commit_url(remote: str, env: Mapping[str, str]) -> str | None:
    repository = repository_from_url(remote)
    host = _host(remote)
    if repository is None or host is None:
        return None
    for server in (env.get("GITHUB_SERVER_URL", "").rstrip("/"), GITHUB):
        if server and url_host(server) == host:
            return f"{server}/{repository}/commit/"
    return None


def _host(remote: str) -> str | None:
    scp = re.match(r"^[\w.-]+@(?P<host>[\w.-]+):[^/]", remote)
    return scp["host"].lower() if scp else url_host(remote) or None
