"""The report in a real headless Chromium (Debian's chromium and chromium-driver, through
selenium): no console error, the demo's pipeline and pins, the table filtered and sorted, and a
screenshot of the demo's report kept under test-artifacts/.

One browser for the module. Where Chromium is missing these tests skip, unless
CLMGIT_REQUIRE_BROWSER=1 (set by .ci/run), which makes them fail instead.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clmgit_sandbox.browser import headless_chromium, missing
from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record, example_channels

from clmgit.registry.file import clusters_yaml
from tests.helpers.cli import run_cli
from tests.helpers.fleet import default_records
from tests.helpers.report import demo_world, record_applied

ARTIFACTS = Path(os.environ.get("CLMGIT_TEST_ARTIFACTS",
                                Path(__file__).resolve().parents[2] / "test-artifacts"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = missing()
    if reason:
        if os.environ.get("CLMGIT_REQUIRE_BROWSER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    with headless_chromium() as driver:
        yield driver


def write_report(repo: Path, out: Path) -> Path:
    r = run_cli("--repo", str(repo), "report", "--html", str(out))
    assert r.code == 0, r.err
    return out


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    tmp = tmp_path_factory.mktemp("demo")
    b, v1, v2 = demo_world(tmp / "config")
    return write_report(b.path, tmp / "report.html"), v1, v2


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fleet with a cluster in each state."""
    tmp = tmp_path_factory.mktemp("mixed")
    b = ConfigRepoBuilder(tmp / "config")
    head = b.commit("dev", {"cluster/stack.yaml": "v: 1\n"}, "Add the main stack")
    for ch in ("alpha", "beta", "stable"):
        b.git("branch", ch, head)
    records = [*default_records(),
               cluster_record("aws:123456789012:eu-central-1:dev-2", channel="dev")]
    b.commit("main", {**example_channels(), "clusters.yaml": clusters_yaml(records)}, "Fleet")
    for args in (("dev", "alpha"), ("alpha", "beta", "--group", "canary")):
        assert run_cli("--repo", str(b.path), "promote", *args, "--force").code == 0
    record_applied(b, records, {"dev-1": head, "alpha-1": head})
    records[1]["status"]["problems"] = [{"type": "stack", "title": "stack alpha-1 failed"}]
    records[2]["status"]["next_version"] = f"{head}#x"  # beta-canary: updating
    records[4]["lifecycle_status"] = "decommission-requested"  # prod-1
    (b.path / "clusters.yaml").write_text(clusters_yaml(records))
    return write_report(b.path, tmp / "report.html")


def open_page(driver: Any, page: Path) -> None:
    driver.get(page.as_uri())
    driver.get_log("browser")  # what earlier pages logged
    driver.refresh()


def errors(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def shown_ids(driver: Any) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#cluster-body tr.r'))"
        ".map(tr => tr.dataset.id.split(':').pop())")


def test_the_demo_report_shows_the_pipeline_without_console_errors(browser: Any, demo) -> None:
    page, v1, v2 = demo
    open_page(browser, page)
    assert errors(browser) == []
    channels = browser.execute_script(
        "return Array.from(document.querySelectorAll('.pipeline > li.channel')).map(ch => "
        "[ch.querySelector('h3').textContent, Array.from(ch.querySelectorAll('li.group')).map("
        "g => [g.dataset.group, g.querySelector('.pin-sha').textContent.trim()])])")
    assert channels == [
        ["dev", [["default", v2[:7]]]],
        ["alpha", [["default", v2[:7]]]],
        ["beta", [["canary", v2[:7]], ["default", v1[:7]]]],
        ["stable", [["canary", v1[:7]], ["default", v1[:7]]]],
    ]
    assert shown_ids(browser) == ["dev-1", "staging-1", "prod-canary"]
    assert "! override" in browser.find_element("id", "history").text
    # the log is really read: an error the page logs now is seen
    browser.execute_script("console.error('probe')")
    assert any("probe" in e["message"] for e in errors(browser))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = browser.execute_cdp_cmd("Page.captureScreenshot",
                                   {"format": "png", "captureBeyondViewport": True})
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    (ARTIFACTS / "report-demo.png").write_bytes(png)


@pytest.mark.parametrize(("state", "ids"), [
    ("in-sync", ["dev-1"]),
    ("failed", ["alpha-1"]),
    ("updating", ["beta-canary"]),
    ("blocked", ["beta-1"]),
    ("decommission", ["prod-1"]),
    ("pending", ["dev-2"]),
])
def test_filtering_by_a_state_shows_exactly_those_clusters(browser: Any, mixed: Path,
                                                           state: str, ids: list[str]) -> None:
    from selenium.webdriver.support.select import Select

    if browser.current_url != mixed.as_uri():
        open_page(browser, mixed)
    Select(browser.find_element("id", "filter-state")).select_by_value(state)
    assert shown_ids(browser) == ids
    assert browser.find_element("id", "shown").text == f"Showing {len(ids)} of 6 clusters"
    assert {td.text for td in browser.find_elements("css selector", "#cluster-body td.state")} \
        == {state}
    Select(browser.find_element("id", "filter-state")).select_by_value("")
    assert errors(browser) == []


def test_text_filter_and_keyboard_sorting(browser: Any, mixed: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    open_page(browser, mixed)
    box = browser.find_element("id", "filter-text")
    box.send_keys("beta")
    assert shown_ids(browser) == ["beta-canary", "beta-1"]
    box.send_keys(" canary")
    assert shown_ids(browser) == ["beta-canary"]
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)  # as a person clears it (clear() fires no input event)
    assert len(shown_ids(browser)) == 6
    alias = browser.find_element("css selector", "#cluster-head button[data-col='0']")
    alias.send_keys(Keys.ENTER)
    assert shown_ids(browser) == ["alpha-1", "beta-1", "beta-canary", "dev-1", "dev-2", "prod-1"]
    header = browser.find_element("css selector", "#cluster-head th:first-child")
    assert header.get_attribute("aria-sort") == "ascending"
    focused = browser.switch_to.active_element
    assert focused.get_attribute("data-col") == "0"  # focus stays on the control
    focused.send_keys(Keys.ENTER)
    assert shown_ids(browser)[0] == "prod-1"
    assert browser.find_element("css selector", "#cluster-head th:first-child") \
        .get_attribute("aria-sort") == "descending"
    assert errors(browser) == []


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory, mixed: Path) -> Path:
    """The mixed fleet's page with 5,000 made-up cluster rows (the table is what grows)."""
    from dataclasses import replace

    from clmgit.report.gather import gather
    from clmgit.report.html import render_html
    from clmgit.workspace import open_workspace

    report = gather(open_workspace(str(mixed.parent / "config")))
    row = report.clusters[0]
    rows = tuple(replace(row, id=f"aws:1:eu-central-1:c{i:04d}", alias=f"c{i:04d}",
                         state="failed" if i % 100 == 7 else "in-sync") for i in range(5000))
    page = tmp_path_factory.mktemp("large") / "report.html"
    page.write_text(render_html(replace(report, clusters=rows)))
    return page


def test_a_large_table_draws_the_rows_in_view(browser: Any, large: Path) -> None:
    open_page(browser, large)
    drawn = shown_ids(browser)
    assert drawn[0] == "c0000" and 10 < len(drawn) < 200  # a screenful, not 5,000 rows
    browser.execute_script("const v = document.getElementById('viewport');"
                           "v.scrollTop = 2500 * window.clmgitReport.rowHeight;"
                           "v.dispatchEvent(new Event('scroll'));")
    browser.execute_script("return new Promise(r => requestAnimationFrame(() => r()))")
    drawn = shown_ids(browser)
    assert "c2500" in drawn and "c0000" not in drawn
    assert browser.execute_script("return window.clmgitReport.filter('', 'failed')") == 50
    assert shown_ids(browser)[:3] == ["c0007", "c0107", "c0207"]
    assert errors(browser) == []
