"""`clmgit registry serve | import | export`: a clusters.yaml through a server and back, and
the server started as a command."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests
import yaml
from typer.testing import CliRunner

from clmgit.cli import app
from clmgit.errors import RegistryError
from clmgit.registry.file import clusters_yaml
from clmgit.registry.server.httpd import RegistryServer
from tests.helpers.registry import TOKEN, records


def run(*args: str) -> str:
    result = CliRunner().invoke(app, ["registry", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_import_then_export_round_trips_a_clusters_yaml(
    server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLMGIT_REGISTRY_TOKEN", TOKEN)
    raw = records(3)
    raw[0]["status"] = {"current_version": "abc#h", "applied_at": "2026-01-01T00:00:00Z"}
    source = tmp_path / "clusters.yaml"
    source.write_text(clusters_yaml(raw))
    assert "3 created, 0 updated" in run("import", str(source), "--registry", server.url)
    assert "0 created, 3 updated" in run("import", str(source), "--registry", server.url)
    out = tmp_path / "exported.yaml"
    run("export", "--registry", server.url, "--out", str(out))
    exported = yaml.safe_load(out.read_text())["clusters"]
    assert [c["id"] for c in exported] == [r["id"] for r in raw]
    assert exported[0]["status"]["current_version"] == "abc#h"
    assert "lease" not in exported[0]
    # The export is itself a file registry, equal to the source.
    assert run("export", "--registry", str(out)) == run("export", "--registry", str(source))


def test_import_needs_a_server(tmp_path: Path) -> None:
    source = tmp_path / "clusters.yaml"
    source.write_text(clusters_yaml(records(1)))
    with pytest.raises(RegistryError, match="is not an http"):
        CliRunner().invoke(
            app,
            ["registry", "import", str(source), "--registry", str(tmp_path / "x.yaml")],
            catch_exceptions=False,
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(*args: str) -> list[str]:
    """`clmgit registry serve ARGS` through the real entry point (exit codes included)."""
    return [sys.executable, "-m", "clmgit", "registry", "serve", *args]


def test_serve_answers_with_the_tokens_from_the_environment(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "CLMGIT_REGISTRY_TOKEN": "one, two"}
    db = f"sqlite:///{tmp_path / 'r.db'}"
    proc = subprocess.Popen(
        serve("--db", db, "--port", str(port)), env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        banner = proc.stderr.readline()  # printed once the port is bound
        assert f"serving the cluster registry on http://127.0.0.1:{port}" in banner
        url = f"http://127.0.0.1:{port}/kubernetes-clusters"
        answer = requests.get(url, headers={"Authorization": "Bearer two"}, timeout=10)
        assert answer.json() == {"items": []}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_serve_refuses_to_start_without_a_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CLMGIT_REGISTRY_TOKEN"}
    proc = subprocess.run(
        serve("--db", f"sqlite:///{tmp_path / 'r.db'}"),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr == (
        "error: the registry server needs a bearer token: set CLMGIT_REGISTRY_TOKEN "
        "(several may be given, comma-separated)\n"
    )
