"""Untrusted text is shown, not rendered, in every Markdown clmgit writes: the report, the pull
request body and the step summary. A freeze reason, a commit subject, an author's name and a
problem title cannot add HTML, links, images, mentions or table cells. Judged by a CommonMark
parser with GFM tables (markdown-it), through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from clmgit_sandbox.configrepo import GIT_ENV
from clmgit_sandbox.github import GitHubStandIn
from markdown_it import MarkdownIt

from clmgit.promotion.pr import pull_request_body
from clmgit.promotion.promote import plan_promotion
from clmgit.workspace import open_workspace
from tests.helpers.fleet import Fleet, default_records
from tests.helpers.promotion import applied

MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
AUTHOR = "[Approved by SRE](https://evil.example/approve)"
SUBJECT = "<img src=https://evil.example/x.png> @acme/sre | cell ![i](https://evil.example/i)"
REASON = "<img src=x onerror=alert(1)> | cell"


def hostile_history(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit to cluster/ on dev by an author named like an approval, applied on dev."""
    name = GIT_ENV["GIT_AUTHOR_NAME"]
    monkeypatch.setitem(GIT_ENV, "GIT_AUTHOR_NAME", AUTHOR)
    fleet.builder.commit("dev", {"cluster/stack.yaml": "v: 4\n"}, SUBJECT)
    monkeypatch.setitem(GIT_ENV, "GIT_AUTHOR_NAME", name)
    fleet.set_clusters(applied(default_records(), "dev", fleet.branch("dev")))


def tokens(markdown: str) -> list:
    flat = []
    for t in MD.parse(markdown):
        flat.append(t)
        flat += t.children or []
    return flat


def assert_inert(markdown: str, *, links_to: str = "") -> None:
    found = tokens(markdown)
    kinds = {t.type for t in found}
    assert not kinds & {"html_inline", "html_block", "image"}, kinds
    hrefs = [t.attrGet("href") for t in found if t.type == "link_open"]
    assert all(links_to and str(h).startswith(links_to) for h in hrefs), hrefs
    text = "".join(t.content for t in found if t.type == "text")
    assert "@acme" not in text and "@\u200bacme/sre" in text


def table_widths(markdown: str) -> set[int]:
    """How many cells each row of each table has (a pipe from input would add one)."""
    found, widths, row = MD.parse(markdown), set(), 0
    for t in found:
        if t.type == "tr_open":
            row = 0
        elif t.type in ("td_open", "th_open"):
            row += 1
        elif t.type == "tr_close":
            widths.add(row)
    return widths


def test_the_markdown_report_shows_untrusted_text(fleet: Fleet, monkeypatch) -> None:
    hostile_history(fleet, monkeypatch)
    assert fleet.cli("freeze", "beta", "--reason", REASON).code == 0

    r = fleet.cli("report", "--markdown")

    assert r.code == 0, r.err
    assert_inert(r.out)
    assert "<img" not in r.out.replace("\\<img", "")
    for table in r.out.split("### ")[1:]:
        assert len(table_widths(table)) <= 1, table
    assert "frozen: \\<img src=x onerror=alert\\(1\\)\\> \\| cell" in r.out


def test_the_pull_request_body_shows_untrusted_text(fleet: Fleet, monkeypatch,
                                                    github: GitHubStandIn) -> None:
    hostile_history(fleet, monkeypatch)
    fleet.builder.git("push", "--quiet", "origin", "main", "dev")

    r = fleet.cli("promote", "dev", "alpha", "--pr")

    assert r.code == 0, r.err
    body = github.requests[-1].json["body"]
    assert SUBJECT not in body and AUTHOR not in body
    assert_inert(body)
    assert "\\[Approved by SRE\\]\\(https://evil.example/approve\\)" in body


def test_the_body_of_a_plan_is_inert_for_any_author(fleet: Fleet, monkeypatch) -> None:
    hostile_history(fleet, monkeypatch)
    ws = open_workspace(str(fleet.path))
    plan = plan_promotion(ws, source="dev", target="alpha")

    body, _ = pull_request_body(ws, plan)

    assert_inert(body)


def test_the_step_summary_shows_untrusted_text(tmp_path: Path) -> None:
    from clmgit.cli import views
    from clmgit.reconcile.run import Result

    summary = tmp_path / "summary.md"
    result = Result("aws:1:eu-central-1:c1", "c1", "update", "failed",
                    detail=f"{REASON} @acme/sre\nnext")

    views.step_summary([result], str(summary), title="clmgit reconcile `x`")

    text = summary.read_text()
    assert_inert(text)
    assert table_widths(text) == {6}
