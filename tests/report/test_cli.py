"""`clmgit report`: the page and the Markdown written whole, bad options refused in one line,
and `--serve` answering read-only with what the repository and registry hold at each load."""

from __future__ import annotations

import http.client
import json
import re
from html import unescape
from pathlib import Path

import pytest

from clmgit.httpd import Background
from clmgit.report.gather import gather
from clmgit.report.html import render_html
from clmgit.report.serve import report_server
from clmgit.workspace import open_workspace
from tests.helpers.fleet import Fleet, default_records


def page_data(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html,
                      re.S)
    assert found, "no inline data"
    return json.loads(found[1])


def test_html_is_one_self_contained_file(fleet: Fleet, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    r = fleet.cli("report", "--html", str(out))
    assert r.code == 0, r.err
    assert r.out == "" and f"wrote {out}" in r.err
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>")
    # nothing is fetched: no external script, style, font or image, and a CSP that forbids it
    assert not re.search(r'<(script|link|img|iframe)[^>]+(src|href)=', html)
    assert "default-src 'none'" in unescape(html) and "prefers-color-scheme" in html
    data = page_data(html)
    assert [row[data["columns"].index("alias")] for row in data["rows"]] == [
        "dev-1", "alpha-1", "beta-canary", "beta-1", "prod-1"]
    assert data["columns"][-1] == "health" and {row[-1] for row in data["rows"]} == {None}
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["report.html"]


def test_markdown_to_stdout_or_a_file(fleet: Fleet, tmp_path: Path) -> None:
    assert fleet.cli("promote", "dev", "alpha", "--force").code == 0
    r = fleet.cli("report", "--markdown")
    assert r.code == 0, r.err
    assert r.out.startswith("## clmgit report: ")
    assert "| alpha | default | `" + fleet.c3[:7] + "` | dev | no |" in r.out
    assert "**! force**<br>--force: 1 of 1 clusters of 'dev' have not applied" in r.out
    assert "| alpha-1 | alpha | default |" in r.out  # not in sync: listed
    out = tmp_path / "summary.md"
    r2 = fleet.cli("report", "--markdown", "--out", str(out))
    assert r2.code == 0 and r2.out == ""
    def steady(text: str) -> list[str]:  # without what moves with the clock
        return [ln for ln in text.splitlines() if "generated" not in ln and "soak" not in ln]

    assert steady(out.read_text()) == steady(r.out)



def test_health_shows_in_the_cluster_rows_group_cells_and_matrix(fleet: Fleet,
                                                                   tmp_path: Path) -> None:
    """A cluster in sync that crash-loops: its verdict is in its row (and it is listed in the
    Markdown although in sync), its group says `1 unhealthy`, its matrix cells `healthy 0/1`."""
    from datetime import UTC, datetime

    from clmgit.model import desired_version, parse_cluster
    from clmgit.timestamps import format_timestamp

    records = default_records()
    dev = records[0]
    version = desired_version(fleet.c3, parse_cluster(dev, "test"))
    now = format_timestamp(datetime.now(UTC))
    dev["status"] = {"current_version": version, "last_version": "", "next_version": "",
                     "problems": [], "applied_at": now,
                     "health": {"state": "unhealthy", "version": version, "observed_at": now,
                                "healthy_since": "", "reasons": ["echo CrashLoopBackOff"]}}
    fleet.set_clusters(records)

    r = fleet.cli("report", "--html", str(tmp_path / "r.html"), "--markdown")

    assert r.code == 0, r.err
    assert "| dev-1 | dev | — |" in r.out and "unhealthy: echo CrashLoopBackOff" in r.out
    assert "health 1 unhealthy" in r.out and "healthy 0/1" in r.out
    data = page_data((tmp_path / "r.html").read_text())
    health = {row[data["columns"].index("alias")]: row[-1] for row in data["rows"]}
    assert health["dev-1"] == "unhealthy: echo CrashLoopBackOff"

def test_html_and_markdown_from_one_run(fleet: Fleet, tmp_path: Path) -> None:
    r = fleet.cli("report", "--html", str(tmp_path / "r.html"), "--markdown")
    assert r.code == 0, r.err
    assert (tmp_path / "r.html").exists() and "### Pipeline" in r.out


@pytest.mark.parametrize(("args", "message"), [
    ((), "say what to make: --html FILE, --markdown or --serve"),
    (("--out", "x.md"), "--out is where --markdown goes"),
    (("--serve", "--markdown"), "--serve makes no file"),
    (("--markdown", "--changes", "-1"), "Invalid value for '--changes'"),
])
def test_usage_errors(fleet: Fleet, args: tuple[str, ...], message: str) -> None:
    r = fleet.cli("report", *args)
    assert r.code == 2
    assert message in r.err


def test_an_unwritable_file_is_one_sentence_and_nothing_written(fleet: Fleet,
                                                                tmp_path: Path) -> None:
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    r = fleet.cli("report", "--html", str(tmp_path / "no" / "such" / "dir.html"))
    assert r.code == 1
    assert r.err.startswith(f"error: cannot write the report to {tmp_path}/no/such/dir.html: ")
    assert r.err.count("\n") == 1 and "Traceback" not in r.err
    r = fleet.cli("report", "--html", str(tmp_path))
    assert r.code == 1 and "it is a directory" in r.err
    assert list(tmp_path.iterdir()) == []


def test_a_broken_registry_is_one_sentence(fleet: Fleet, tmp_path: Path) -> None:
    fleet.builder.commit("main", {"clusters.yaml": "clusters: [\n"}, "Break the registry")
    r = fleet.cli("report", "--markdown")
    assert r.code == 1 and r.err.startswith("error: ") and r.err.count("\n") == 1


def test_registry_text_cannot_end_the_pages_script(fleet: Fleet, tmp_path: Path) -> None:
    records = default_records()
    records[0]["alias"] = "</script><script>alert(1)</script>"
    fleet.set_clusters(records)
    html = render_html(gather(open_workspace(str(fleet.path))))
    assert "<script>alert(1)" not in html
    assert page_data(html)["rows"][0][0] == "</script><script>alert(1)</script>"


def get(port: int, path: str = "/", *, method: str = "GET",
        host: str | None = None) -> tuple[int, str, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Host": host} if host else {}
    conn.request(method, path, headers=headers)
    resp = conn.getresponse()
    body = resp.read().decode()
    conn.close()
    return resp.status, body, dict(resp.getheaders())


def test_serve_rereads_the_repository_and_registry_on_each_load(fleet: Fleet) -> None:
    def page() -> str:
        return render_html(gather(open_workspace(str(fleet.path))))

    server = Background(report_server(page, port=0), "report")
    try:
        status, html, headers = get(server.port)
        assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
        assert len(page_data(html)["rows"]) == 5
        assert "from dev" in html and fleet.c3[:7] in html
        fleet.set_clusters(default_records()[:2])
        assert fleet.cli("freeze", "beta", "--reason", "incident 42").code == 0
        _, html, _ = get(server.port)
        assert len(page_data(html)["rows"]) == 2 and "incident 42" in html
        assert get(server.port, method="POST")[0] == 405
        assert get(server.port, method="DELETE")[0] == 405
        assert get(server.port, "/other")[0] == 404
        assert get(server.port, host="evil.example")[0] == 403
        assert get(server.port, method="HEAD")[:2] == (200, "")
        fleet.builder.commit("main", {"clusters.yaml": "clusters: [\n"}, "Break the registry")
        status, text, _ = get(server.port)
        assert status == 500 and text.startswith("error: ") and "clusters.yaml" in text
    finally:
        server.stop()


def test_serve_on_a_taken_port_is_one_sentence(fleet: Fleet) -> None:
    taken = Background(report_server(lambda: "", port=0), "taken")
    try:
        r = fleet.cli("report", "--serve", "--port", str(taken.port))
        assert r.code == 1
        assert r.err.startswith(f"error: cannot listen on 127.0.0.1:{taken.port}: ")
        assert "choose another --port" in r.err
    finally:
        taken.stop()


#: Starts clmgit as a shell starts a background job (`clmgit report --serve &`): SIGINT ignored.
AS_BACKGROUND_JOB = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                     "os.execv(sys.executable, [sys.executable, '-m', 'clmgit', *sys.argv[1:]])")


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_serve_from_the_command_line_until_ctrl_c(fleet: Fleet, stop: str) -> None:
    """The command prints where it listens (--port 0: a free port), serves, and stops on
    SIGINT or SIGTERM with exit code 0, also when it inherited an ignored SIGINT."""
    import os
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", AS_BACKGROUND_JOB, "--repo", str(fleet.path), "report", "--serve",
         "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # faulthandler: a server that does not stop is made to show where it is (SIGABRT).
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
             "PYTHONFAULTHANDLER": "1"})
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        found = re.match(r"serving the report on http://127\.0\.0\.1:(\d+)/ ", first)
        assert found, first + (proc.stderr.read() if proc.stderr else "")
        status, html, _ = get(int(found[1]))
        assert status == 200 and len(page_data(html)["rows"]) == 5
        proc.send_signal(getattr(signal, stop))
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            signals = [line for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines()
                       if line.startswith("Sig")]
            proc.send_signal(signal.SIGABRT)
            out, err = proc.communicate(timeout=30)
            raise AssertionError(f"not stopped by {stop}; {signals}; stderr:\n{err}") from None
        assert proc.returncode == 0 and "stopped" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_markdown_escapes_registry_text(fleet: Fleet) -> None:
    records = default_records()
    records[0]["alias"] = "a|b*c"
    records[0]["status"]["current_version"] = "x|`y#z"
    fleet.set_clusters(records)
    r = fleet.cli("report", "--markdown")
    assert r.code == 0, r.err
    row = next(ln for ln in r.out.splitlines() if ln.startswith("| a\\|b\\*c |"))
    assert row.count(" | ") == 7 and "x\\|\\`y" in row


def test_serve_answers_every_other_method_405_with_its_headers(fleet: Fleet) -> None:
    """Through the real command: OPTIONS, TRACE, WebDAV's and invented methods, and a request
    http.server itself refuses, all answered in the form of the page's answers."""
    import os
    import socket
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "clmgit", "--repo", str(fleet.path), "report", "--serve",
         "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    try:
        assert proc.stdout is not None
        found = re.match(r"serving the report on http://127\.0\.0\.1:(\d+)/ ",
                         proc.stdout.readline())
        assert found
        port = int(found[1])
        for method in ("OPTIONS", "TRACE", "PROPFIND", "CONNECT", "BREW", "POST"):
            status, body, headers = get(port, method=method)
            assert status == 405, (method, status, body)
            assert headers["Allow"] == "GET, HEAD"
            assert "default-src 'none'" in headers["Content-Security-Policy"]
            assert headers["X-Content-Type-Options"] == "nosniff"
            assert body == "the report is read-only\n"
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
            raw.sendall(b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = raw.makefile("rb").read().decode()
        assert answer.startswith("HTTP/1.1 414 ")
        assert "X-Content-Type-Options: nosniff" in answer and "<html" not in answer.lower()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
