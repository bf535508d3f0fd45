"""`python -m clmgit_sandbox.github`: the GitHub stand-in on its own, for `promote --pr` by
hand. It prints the lines for the shell (the token stays in a 0600 file), answers GitHub's
pulls API for the bare repository it was given, and stops on Ctrl-C."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.helpers.processes import read_until, stop


def test_the_stand_in_serves_a_bare_repository_until_ctrl_c(tmp_path: Path) -> None:
    bare = tmp_path / "config.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
    token_file = tmp_path / "token"
    process = subprocess.Popen(
        [sys.executable, "-m", "clmgit_sandbox.github", "--repo", f"org/config={bare}",
         "--token-file", str(token_file)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out = read_until(process, "Ctrl-C stops it", timeout=60)
        url = re.search(r"export GITHUB_API_URL=(\S+)", out)[1]  # type: ignore[index]  # printed
        assert "export GITHUB_REPOSITORY=org/config" in out
        token = token_file.read_text().strip()
        assert token and token not in out  # never printed
        assert token_file.stat().st_mode & 0o777 == 0o600
        request = urllib.request.Request(f"{url}/repos/org/config/pulls",
                                         headers={"Authorization": f"Bearer {token}",
                                                  "Accept": "application/vnd.github+json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200 and json.loads(answer.read()) == []
    finally:
        rest = stop(process, signal.SIGINT)
    assert process.returncode == 0 and "Stopped; 0 pull request(s) were opened." in rest


def test_a_repo_that_is_not_a_directory_is_one_sentence(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "clmgit_sandbox.github", "--repo",
                        f"org/config={tmp_path / 'none'}", "--token-file", str(tmp_path / "t")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "expected OWNER/NAME=BARE" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "t").exists()
