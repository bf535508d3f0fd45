"""Looking at a promotion's result in the `fleet` repo: records that have applied a SHA, a
channel's pins, trees and commit messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import yaml

from clmgit.model import desired_version, parse_cluster
from tests.helpers.fleet import Fleet


def applied(records, channel: str, sha: str, *, ago: timedelta = timedelta(days=3)):
    """Records with every cluster of `channel` marked as running `sha` since `ago`."""
    at = (datetime.now(UTC) - ago).strftime("%Y-%m-%dT%H:%M:%SZ")
    for r in records:
        if r["channel"] == channel:
            version = desired_version(sha, parse_cluster(r, "test"))
            r["status"] = {
                "current_version": version,
                "last_version": "",
                "next_version": "",
                "problems": [],
                "applied_at": at,
            }
    return records


def pins(fleet: Fleet, channel: str) -> dict[str, str | None]:
    data = yaml.safe_load(fleet.file(f"channels/{channel}.yaml"))
    return {g["name"]: g.get("sha") for g in data.get("groups") or []}


def tree(fleet: Fleet, ref: str, path: str = "") -> str:
    return fleet.builder.git("rev-parse", f"{ref}^{{tree}}" if not path else f"{ref}:{path}")


def last_message(fleet: Fleet, ref: str = "main") -> str:
    return fleet.builder.git("log", "-1", "--format=%B", ref)
