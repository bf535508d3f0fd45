"""`make sandbox REPO=... REGISTRY=...`: the sandbox of a user's own config repo works on a
clone (every branch) and a copy of the registry, never on the originals; bad input is one
sentence and exit 1; `--help` starts nothing. (The running sandbox:
tests/sandbox/test_explore.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from clmgit_sandbox.configrepo import init_example_repo
from clmgit_sandbox.explore import prepare

from clmgit.errors import ClmgitError


@pytest.fixture
def own_repo(tmp_path: Path) -> Path:
    return init_example_repo(tmp_path / "mine").path


def git(path: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=path, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_a_clone_with_every_branch_and_the_repos_own_registry(own_repo: Path,
                                                              tmp_path: Path) -> None:
    before = git(own_repo, "for-each-ref")
    (tmp_path / "box").mkdir()
    prepared = prepare(tmp_path / "box", repo=str(own_repo), registry=None,
                       control_branch="main")
    assert prepared.repo != own_repo and prepared.registry is None
    assert git(prepared.repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    for branch in ("dev", "alpha", "beta", "stable"):
        assert git(prepared.repo, "rev-parse", branch) == git(own_repo, "rev-parse", branch)
    assert len(prepared.clusters) == 3
    # --push and --pr go to a bare copy in the sandbox, never to the user's repository
    origin = Path(git(prepared.repo, "remote", "get-url", "origin"))
    assert origin == tmp_path / "box" / "origin.git" and (origin / "HEAD").exists()
    assert git(own_repo, "for-each-ref") == before


def test_a_registry_inside_the_repo_maps_to_the_clone_outside_is_copied(
        own_repo: Path, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    inside = prepare(tmp_path / "a", repo=str(own_repo),
                     registry=str(own_repo / "clusters.yaml"), control_branch="main")
    assert inside.registry == inside.repo / "clusters.yaml"
    outside = tmp_path / "fleet.yaml"
    outside.write_text((own_repo / "clusters.yaml").read_text())
    (tmp_path / "b").mkdir()
    copied = prepare(tmp_path / "b", repo=str(own_repo), registry=str(outside),
                     control_branch="main")
    assert copied.registry is not None and copied.registry != outside
    assert copied.registry.read_text() == outside.read_text()
    assert [c.id for c in copied.clusters] == [c.id for c in inside.clusters]


@pytest.mark.parametrize(("args", "message"), [
    (["--repo", "{tmp}/nothing"], "git clone failed"),
    (["--repo", "{repo}", "--registry", "{tmp}/none.yaml"],
     "--registry {tmp}/none.yaml: no such file"),
    (["--registry", "{repo}/clusters.yaml"], "--registry needs --repo"),
    (["--repo", "{repo}", "--control-branch", "dev"], "has no clusters.yaml on 'dev'"),
])
def test_bad_input_is_one_sentence_and_leaves_nothing(
        own_repo: Path, tmp_path: Path, args: list[str], message: str) -> None:
    argv = [a.format(tmp=tmp_path, repo=own_repo) for a in args]
    temp = tmp_path / "temp"
    temp.mkdir()
    r = subprocess.run([sys.executable, "-m", "clmgit_sandbox.explore", *argv],
                       capture_output=True, text=True, env={**os.environ, "TMPDIR": str(temp)},
                       timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert message.format(tmp=tmp_path) in r.stderr and "Traceback" not in r.stderr
    assert list(temp.iterdir()) == []  # the throw-away directory is gone


@pytest.mark.parametrize("module", ["explore", "demo", "github", "aws", "kubeapi", "kubectl"])
def test_help_of_every_entry_point_starts_nothing(module: str, tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", f"clmgit_sandbox.{module}", "--help"],
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "TMPDIR": str(tmp_path)})
    assert r.returncode == 0 and r.stdout.startswith("usage: "), r.stdout + r.stderr
    assert list(tmp_path.iterdir()) == []


def test_prepare_refuses_no_repo_with_a_registry() -> None:
    with pytest.raises(ClmgitError, match="--registry needs --repo"):
        prepare(Path(tempfile.gettempdir()), repo=None, registry="x.yaml", control_branch="main")
