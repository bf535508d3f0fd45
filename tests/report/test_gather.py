"""The report's data: the pipeline, the matrix, the cluster rows and the history, gathered from
the same functions as `status` and `history`."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from clmgit.promotion.status import fleet_status
from clmgit.report.forge import forge_commit_url
from clmgit.report.gather import gather
from clmgit.report.model import Report
from clmgit.timestamps import parse_timestamp
from clmgit.workspace import open_workspace
from tests.helpers.fleet import Fleet, default_records
from tests.helpers.report import demo_world, record_applied


def report_of(path: Path, now: datetime | None = None, **kwargs: Any) -> Report:
    return gather(open_workspace(str(path)), now=now, **kwargs)


def applied_at(path: Path, channel: str) -> datetime:
    """When the clusters of a channel of the demo world applied their pins."""
    times = {parse_timestamp(c.applied_at) for c in report_of(path).clusters
             if c.channel == channel}
    assert None not in times
    return max(t for t in times if t is not None)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    b, v1, v2 = demo_world(tmp_path_factory.mktemp("demo") / "config")
    return b.path, v1, v2


def test_the_pipeline_is_each_channel_after_its_source_with_its_groups(demo) -> None:
    path, v1, v2 = demo
    r = report_of(path, now=applied_at(path, "alpha") + timedelta(hours=1))
    assert [(c.name, c.source) for c in r.channels] == [
        ("dev", None), ("alpha", "dev"), ("beta", "alpha"), ("stable", "beta")]
    pins = {(c.name, g.name): g.pinned_sha for c in r.channels for g in c.groups}
    assert pins == {("dev", "default"): v2, ("alpha", "default"): v2, ("beta", "canary"): v2,
                    ("beta", "default"): v1, ("stable", "canary"): v1,
                    ("stable", "default"): v1}
    beta = {g.name: g for g in r.channels[2].groups}
    assert beta["canary"].gate == "up to date" and beta["canary"].behind == 0
    # the planner's verdict, judged now: v2 has only just landed in alpha
    assert beta["default"].gate == "refused" and beta["default"].behind == 1
    assert any("soaked in 'alpha'" in why for why in beta["default"].refusals)
    assert beta["default"].next_sha == v2
    assert beta["default"].applied_in_source == (1, 1)  # staging-1 applied v2
    # applied in alpha an hour ago, beta's soak is 2h: an hour left
    assert beta["default"].soak_left == "1h"
    assert beta["canary"].states == {"in-sync": 1} and beta["default"].clusters == 0
    stable = r.channels[3].groups[0]
    assert stable.gate == "error" and "different SHAs" in stable.refusals[0]
    assert stable.behind is None and stable.applied_in_source is None
    # health as `status` judges it: applied, not yet observed (none of stable's applied)
    assert beta["canary"].health == "1 pending" and stable.health is None


def test_the_matrix_says_where_each_change_is_pinned_and_applied(demo) -> None:
    path, v1, v2 = demo
    r = report_of(path)
    assert [(c.channel, c.group) for c in r.columns][:3] == [
        ("dev", "default"), ("alpha", "default"), ("beta", "canary")]
    assert [c.sha for c in r.changes] == [v2, v1]
    newest = {(col.channel, col.group): cell for col, cell in zip(r.columns, r.changes[0].cells,
                                                                  strict=True)}
    assert newest["beta", "canary"].pinned and newest["beta", "canary"].applied == 1
    assert not newest["beta", "default"].pinned and newest["beta", "default"].clusters == 0
    assert not newest["stable", "default"].pinned
    oldest = r.changes[1].cells
    assert all(cell.pinned for cell in oldest)  # version 1 is in every pin
    assert report_of(path, changes=1).changes[0].sha == v2


def test_the_matrix_counts_clusters_that_applied_an_older_commit(fleet: Fleet) -> None:
    records = default_records()
    record_applied(fleet.builder, records, {"dev-1": fleet.c2})
    r = report_of(fleet.path)
    dev = r.columns.index(next(c for c in r.columns if c.channel == "dev"))
    cells = {change.sha: change.cells[dev] for change in r.changes}
    assert (cells[fleet.c3].applied, cells[fleet.c2].applied, cells[fleet.c1].applied) == (0, 1, 1)
    assert all(cells[sha].pinned for sha in (fleet.c1, fleet.c2, fleet.c3))


def test_cluster_rows_are_the_status_rows_with_applied_at_and_problems(demo) -> None:
    path, _, _ = demo
    ws = open_workspace(str(path))
    r = gather(ws)
    states = fleet_status(ws)
    assert [c.id for c in r.clusters] == [s.id for s in states]
    assert [c.state for c in r.clusters] == [s.state for s in states] == ["in-sync"] * 3
    assert all(parse_timestamp(c.applied_at) for c in r.clusters)
    assert all(c.problems == () for c in r.clusters)
    assert [c.health for c in r.clusters] == [
        s.health + (f": {s.health_reason}" if s.health_reason else "") for s in states]
    assert r.states == {"in-sync": 3}


def test_a_failed_cluster_shows_its_problems(fleet: Fleet) -> None:
    records = default_records()
    records[0]["status"]["problems"] = [
        {"type": "stack", "title": "stack dev-1 failed"},
        {"type": "kube", "title": "manifests not applied"}]
    fleet.set_clusters(records)
    row = report_of(fleet.path).clusters[0]
    assert row.state == "failed"
    assert row.problems == ("stack dev-1 failed", "manifests not applied")


def test_history_names_what_each_override_lifted(demo) -> None:
    path, _, v2 = demo
    r = report_of(path)
    canary = r.history[0]
    assert (canary.action, canary.channel, canary.groups, canary.sha) == (
        "promote", "beta", ("canary",), v2)
    assert canary.overrides == ("force",)
    reasons = r.override_reasons[canary.commit]
    assert len(reasons) == 1 and reasons[0].startswith("--force: ")
    assert "soaked in 'alpha'" in reasons[0]
    assert r.history[1].overrides == () and r.history[1].commit not in r.override_reasons
    assert len(report_of(path, history_limit=1).history) == 1


@pytest.mark.parametrize(("remote", "env", "url"), [
    ("https://github.com/acme/fleet.git", {}, "https://github.com/acme/fleet/commit/"),
    ("git@github.com:acme/fleet.git", {}, "https://github.com/acme/fleet/commit/"),
    ("ssh://git@github.com/acme/fleet", {}, "https://github.com/acme/fleet/commit/"),
    ("https://ghe.example.org/acme/fleet.git", {"GITHUB_SERVER_URL": "https://ghe.example.org/"},
     "https://ghe.example.org/acme/fleet/commit/"),
    ("https://ghe.example.org/acme/fleet.git", {}, None),
    ("https://gitlab.com/acme/fleet.git", {}, None),
    ("/srv/git/fleet.git", {}, None),
    ("https://github.com/acme", {}, None),
])
def test_commits_link_to_github_only(remote: str, env: dict[str, str], url: str | None) -> None:
    assert forge_commit_url(remote, env) == url


def test_the_report_links_commits_when_origin_is_on_github(fleet: Fleet, monkeypatch) -> None:
    monkeypatch.delenv("GITHUB_SERVER_URL", raising=False)
    assert report_of(fleet.path).commit_url is None  # origin is a directory
    fleet.builder.git("remote", "set-url", "origin", "git@github.com:acme/fleet.git")
    r = report_of(fleet.path)
    assert r.link(fleet.c3) == f"https://github.com/acme/fleet/commit/{fleet.c3}"
    assert r.link(None) is None


def test_a_repository_url_shows_without_its_credentials(fleet: Fleet) -> None:
    from clmgit.adapters.git import GitRepo
    from clmgit.workspace import Workspace

    url = "https://x-access-token:s3cret-token@github.com/acme/fleet.git"
    r = gather(Workspace(GitRepo(fleet.path), url=url))
    assert "s3cret-token" not in r.repository and "github.com/acme/fleet" in r.repository
    assert r.commit_url == "https://github.com/acme/fleet/commit/"
