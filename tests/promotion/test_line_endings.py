"""Channel files of any line ending (issue 15, case 6): a file without a final newline, with
CRLF line ends or with a byte order mark is edited through the real CLI, and keeps its form."""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers.fleet import Fleet


def committed(fleet: Fleet, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(fleet.path), "show", f"main:{path}"],
                          capture_output=True, check=True).stdout


FORMS = {
    "no final newline": lambda t: t.rstrip("\n"),
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "crlf, no final newline": lambda t: t.rstrip("\n").replace("\n", "\r\n"),
    "bom": lambda t: "\ufeff" + t,
}


@pytest.mark.parametrize("form", FORMS)
def test_promote_and_freeze_keep_the_file_form(fleet: Fleet, form: str) -> None:
    path = "channels/beta.yaml"
    original = FORMS[form](fleet.file(path)).encode()
    (fleet.path / path).write_bytes(original)
    fleet.builder.git("commit", "--quiet", "-am", f"beta.yaml: {form}")
    r = fleet.cli("promote", "dev", "beta", "--sha", fleet.c2, "--force", "--from-any")
    assert r.code == 0, r.err
    r = fleet.cli("freeze", "beta", "--reason", "release week")
    assert r.code == 0, r.err
    text = committed(fleet, path)
    assert text.startswith(b"\xef\xbb\xbf") == (form == "bom")
    assert text.endswith(b"\n") == ("no final newline" not in form)
    lines = text.split(b"\n")
    if "crlf" in form:
        assert all(line.endswith(b"\r") for line in lines[:-1])
    else:
        assert b"\r" not in text
    assert text.count(fleet.c2.encode()) == 2  # both groups pinned
    assert b"freeze_reason: release week" in text or b'freeze_reason: "release week"' in text
    # every line that holds no edited value is as it was (the old last line of a file without a
    # final newline gains the file's line end when a key is added after it)
    edited = (b"sha:", b"promoted_at:", b"promoted_from:", b"frozen:", b"freeze_reason:")

    def kept(text: bytes) -> list[bytes]:
        return [ln.removesuffix(b"\r") for ln in text.split(b"\n")
                if not ln.strip().startswith(edited)]

    assert kept(text) == kept(original)
