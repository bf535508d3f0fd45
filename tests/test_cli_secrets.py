"""Secrets stay out of what the CLI prints: `-vv` shows botocore's debug log, never the
session token or secret key it signs with; a Kubernetes token can come from a file or stdin,
out of `ps`."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from clmgit.redact import LogRedactor, redact_secrets
from tests.helpers.fleet import Fleet

if TYPE_CHECKING:
    from clmgit.reconcile.session import Options

SESSION_TOKEN = "FQoGZXIvYXdzEJr-session-token-never-shown-0123456789"
SECRET_KEY = "wJalrXUtnFEMI-secret-key-never-shown-EXAMPLEKEY"
KUBE_TOKEN = "kube-bearer-token-never-shown-0123456789"


def test_a_verbose_run_against_moto_shows_botocore_but_no_credential(
    fleet: Fleet, moto_endpoint: str
) -> None:
    env = {**os.environ, "AWS_ENDPOINT_URL": moto_endpoint, "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
           "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_SESSION_TOKEN": SESSION_TOKEN,
           "AWS_DEFAULT_REGION": "eu-central-1", "CLMGIT_TOKEN": KUBE_TOKEN}
    result = subprocess.run(
        [sys.executable, "-m", "clmgit", "--repo", str(fleet.path), "-vv", "reconcile",
         "--cluster", "dev-1", "--dry-run", "--processes", "1"],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert "botocore" in result.stderr and "x-amz-security-token" in result.stderr.lower()
    assert SESSION_TOKEN not in result.stderr and SESSION_TOKEN not in result.stdout
    assert SECRET_KEY not in result.stderr and SECRET_KEY not in result.stdout
    assert SESSION_TOKEN[:20] not in result.stderr  # not even a part of it
    assert KUBE_TOKEN not in result.stderr and KUBE_TOKEN not in result.stdout


def test_the_credentials_of_an_assumed_role_are_not_shown_either(
    fleet: Fleet, moto_endpoint: str
) -> None:
    import re

    env = {**os.environ, "AWS_ENDPOINT_URL": moto_endpoint, "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
           "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_DEFAULT_REGION": "eu-central-1",
           "CLMGIT_AWS_ROLES": '{"123456789012": "arn:aws:iam::123456789012:role/clmgit"}'}
    result = subprocess.run(
        [sys.executable, "-m", "clmgit", "--repo", str(fleet.path), "-vv", "reconcile",
         "--cluster", "dev-1", "--dry-run", "--processes", "1", "--token-file", "-"],
        input=KUBE_TOKEN, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert "AssumeRole" in result.stderr, result.stderr[-2000:]
    shown = re.findall(r"<(SecretAccessKey|SessionToken)>([^<]*)<", result.stderr)
    assert shown and {value for _, value in shown} == {"***"}
    assert "clmgit-dev-1" in result.stderr  # the session name


def test_one_v_is_clmgit_s_debug_log_without_the_libraries_request_dumps(
    fleet: Fleet, moto_endpoint: str
) -> None:
    env = {**os.environ, "AWS_ENDPOINT_URL": moto_endpoint, "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
           "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_DEFAULT_REGION": "eu-central-1"}
    result = subprocess.run(
        [sys.executable, "-m", "clmgit", "--repo", str(fleet.path), "-v", "reconcile",
         "--cluster", "dev-1", "--dry-run", "--processes", "1"],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert "DEBUG clmgit.adapters.git: git " in result.stderr
    assert "botocore" not in result.stderr and "urllib3" not in result.stderr


def test_the_redactor_hides_headers_arguments_and_exceptions() -> None:
    record = logging.LogRecord(
        "botocore.endpoint", logging.DEBUG, __file__, 1,
        "Sending http request: %s", ({"Authorization": "Bearer kube-token-123"},), None)
    try:
        raise RuntimeError("x-amz-security-token:abc123def")
    except RuntimeError:
        record.exc_info = sys.exc_info()
    LogRedactor(["registry-token-42"]).filter(record)
    shown = logging.Formatter().format(record)
    assert "kube-token-123" not in shown and "abc123def" not in shown
    assert "Sending http request" in shown and "RuntimeError" in shown
    assert LogRedactor(["registry-token-42"]).hide("sent registry-token-42") == "sent ***"
    assert (redact_secrets("<SessionToken>FQo+/=</SessionToken>")
            == "<SessionToken>***</SessionToken>")
    assert redact_secrets("'X-Amz-Security-Token': b'FQo'") == "'X-Amz-Security-Token': b'***'"


# --- the Kubernetes token from a file or stdin ---------------------------------------------------


@pytest.fixture
def tokens_seen(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The token each reconcile was given (the work itself, an own seam, left out)."""
    import clmgit.reconcile.session

    seen: list[str | None] = []

    def reconcile(ws: object, options: Options, **kwargs: object) -> list[object]:
        seen.append(options.token)
        return []

    monkeypatch.setattr(clmgit.reconcile.session, "reconcile", reconcile)
    monkeypatch.delenv("CLMGIT_TOKEN", raising=False)
    return seen


def test_the_token_comes_from_a_file_an_env_file_or_stdin(
    fleet: Fleet, tokens_seen: list[str | None], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "token"
    path.write_text("kube-token-from-file\n")
    assert fleet.cli("reconcile", "--token-file", str(path)).code == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO("  kube-token-from-stdin\n"))
    assert fleet.cli("reconcile", "--token-file", "-").code == 0
    monkeypatch.setenv("CLMGIT_TOKEN_FILE", str(path))
    assert fleet.cli("reconcile").code == 0
    assert tokens_seen == ["kube-token-from-file", "kube-token-from-stdin", "kube-token-from-file"]


@pytest.mark.parametrize(("content", "sentence"), [
    (None, "error: cannot read the token file {path}: No such file or directory\n"),
    ("  \n", "error: the token file {path} is empty; it must hold the bearer token\n"),
])
def test_a_missing_or_empty_token_file_is_one_sentence(
    fleet: Fleet, tokens_seen: list[str | None], tmp_path: Path, content: str | None,
    sentence: str
) -> None:
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content)
    before = fleet.file("clusters.yaml")
    result = fleet.cli("reconcile", "--token-file", str(path))
    assert (result.code, result.err) == (1, sentence.format(path=path))
    assert tokens_seen == [] and fleet.file("clusters.yaml") == before


def test_a_token_given_twice_is_refused(fleet: Fleet, tokens_seen: list[str | None],
                                        tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("t-from-file")
    result = fleet.cli("reconcile", "--token", "t-inline", "--token-file", str(path))
    assert result.code == 1 and "give the token once" in result.err
    assert tokens_seen == []
