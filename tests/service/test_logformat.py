"""`--log-format json` (`CLMGIT_LOG_FORMAT`): every line on stderr one JSON object with time,
level and message, the cluster and step where known; text stays the default."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from clmgit.logformat import JsonFormatter


def _clmgit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "clmgit", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def test_an_error_is_one_json_object_on_stderr(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere")
    for args, env in ((("--log-format", "json"), {}), ((), {"CLMGIT_LOG_FORMAT": "json"})):
        proc = _clmgit(*args, "--repo", missing, "status", env=env)
        assert proc.returncode == 1
        lines = proc.stderr.splitlines()
        assert len(lines) == 1, proc.stderr
        line = json.loads(lines[0])
        assert set(line) == {"time", "level", "message"}
        assert line["level"] == "error" and missing in line["message"]
        assert datetime.fromisoformat(line["time"]).tzinfo is not None


def test_text_stays_the_default(tmp_path: Path) -> None:
    proc = _clmgit("--repo", str(tmp_path / "nowhere"), "status")
    assert proc.stderr.startswith("error: ")


def test_a_record_names_its_cluster_and_step_and_its_traceback() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("clmgit.engine", logging.WARNING, __file__, 1,
                                   "cannot apply %s", ("stacks",), sys.exc_info())
    record.cluster, record.step = "c1", "stacks"
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "cannot apply stacks"
    assert (line["level"], line["logger"], line["cluster"], line["step"]) == (
        "warning", "clmgit.engine", "c1", "stacks")
    assert line["exception"].endswith("ValueError: boom")


def test_an_event_is_logged_with_its_cluster_and_step(caplog) -> None:
    from clmgit import events

    with caplog.at_level(logging.DEBUG, logger="clmgit.events"):
        events.emit(events.STEP_FAILED, cluster="c1", step="manifests")
        events.emit(events.RECONCILE_FAILED, "cluster c1 failed: no", cluster="c1")
    first, second = caplog.records
    assert (first.levelno, first.cluster, first.step, first.event) == (
        logging.DEBUG, "c1", "manifests", "step.failed")
    assert (second.levelno, second.getMessage()) == (logging.INFO, "cluster c1 failed: no")
