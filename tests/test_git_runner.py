"""Every git call clmgit makes goes through one runner with one failure form: the command, its
exit code and what git said — with credentials in URLs hidden."""

from __future__ import annotations

from pathlib import Path

import pytest

from clmgit.adapters.git import GitRepo, failure, run_git
from clmgit.errors import GitError
from clmgit.redact import redact


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    run_git(["init", "--quiet", str(tmp_path / "r")], cwd=tmp_path)
    return GitRepo(tmp_path / "r")


def test_a_failure_names_command_exit_code_and_what_git_said(repo: GitRepo) -> None:
    with pytest.raises(GitError) as raised:
        repo.run("cat-file", "-p", "no-such-object")
    assert str(raised.value).startswith("git cat-file failed (exit 128): fatal: ")
    assert "\n" not in str(raised.value)


def test_allowed_exit_codes_are_answers_not_failures(repo: GitRepo) -> None:
    assert repo.rev("refs/heads/nothing") is None
    assert run_git(["merge-base", "--is-ancestor", "a", "b"], cwd=repo.git_dir,
                   ok=range(256)).returncode == 128


def test_a_killed_git_and_options_before_the_command() -> None:
    assert failure(["-c", "x=y", "push"], -9, b"") == "git push failed (killed): no message"


def test_credentials_never_reach_the_message(tmp_path: Path) -> None:
    url = "https://x-access-token:ghs_SECRET@127.0.0.1:9/org/repo.git"
    with pytest.raises(GitError) as raised:
        GitRepo.mirror(url, tmp_path / "mirror")
    text = str(raised.value)
    assert "ghs_SECRET" not in text
    assert text.startswith("cannot fetch the config repo https://x-access-token:***@127.0.0.1:9/")
    assert "git clone failed (exit 128)" in text


@pytest.mark.parametrize(("text", "shown"), [
    ("https://u:pw@h/x", "https://u:***@h/x"),
    ("https://TOKEN@h/x", "https://***@h/x"),
    ("postgresql://clm:pw@db:5432/reg and sqlite:///tmp/r.db", "postgresql://clm:***@db:5432/reg"
     " and sqlite:///tmp/r.db"),
    ("git@github.com:o/r.git", "git@github.com:o/r.git"),  # scp-like: no secret in it
])
def test_redact(text: str, shown: str) -> None:
    assert redact(text) == shown
