"""The long-lived object reader behind `GitConfigSource`, on real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clmgit.adapters.gitobjects import ObjectReader, tree_entries
from clmgit.errors import GitError
from tests.helpers.configrepo import ConfigRepo


def git(repo: Path, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, input=data, capture_output=True,
                          check=True).stdout.decode().strip()


def test_reads_objects_by_any_name_git_understands(config_repo: ConfigRepo) -> None:
    sha = config_repo.commit({"cluster/stack.yaml": "v: 1\n", "cluster/a/b.yaml": "b\n"})
    reader = ObjectReader(config_repo.builder.path / ".git")
    commit, root, blob, missing = reader.read(
        [sha, f"{sha}:cluster", f"{sha}:cluster/stack.yaml", f"{sha}:cluster/none.yaml"])
    assert commit is not None and commit.kind == "commit" and commit.oid == sha
    assert blob is not None and (blob.kind, blob.data) == ("blob", b"v: 1\n")
    assert missing is None
    assert root is not None and root.kind == "tree"
    entries = {e.name: e for e in tree_entries(root)}
    assert sorted(entries) == ["a", "stack.yaml"]
    assert entries["a"].is_tree and entries["stack.yaml"].is_file
    assert entries["stack.yaml"].oid == blob.oid
    reader.close()


def test_a_batch_larger_than_the_pipe_is_read_without_blocking(config_repo: ConfigRepo) -> None:
    text = "line of a large file\n" * 200
    sha = config_repo.commit({"cluster/big.yaml": text})
    names = [f"{sha}:cluster/big.yaml"] * 3000  # 150 kB of requests, 12 MB of answers
    found = ObjectReader(config_repo.builder.path / ".git").read(names)
    assert len(found) == 3000
    assert all(obj is not None and obj.data == text.encode() for obj in found)


def test_a_process_that_died_is_an_error_and_the_next_read_starts_another(
        config_repo: ConfigRepo) -> None:
    sha = config_repo.commit({"cluster/stack.yaml": "v: 1\n"})
    reader = ObjectReader(config_repo.builder.path / ".git")
    assert reader.read([sha])[0] is not None
    assert reader._proc is not None
    reader._proc._popen.kill()
    reader._proc._popen.wait()
    with pytest.raises(GitError, match=r"git cat-file failed \((exit \d+|killed)\)"):
        reader.read([sha])
    assert reader.read([f"{sha}:cluster/stack.yaml"])[0].data == b"v: 1\n"  # type: ignore[union-attr]  # the object exists


def test_objects_written_while_it_runs_are_found(config_repo: ConfigRepo) -> None:
    first = config_repo.commit({"cluster/stack.yaml": "v: 1\n"})
    reader = ObjectReader(config_repo.builder.path / ".git")
    assert reader.read([first])[0] is not None
    later = config_repo.commit({"cluster/stack.yaml": "v: 2\n"})
    git(config_repo.builder.path, "repack", "-adq")  # as a fetch leaves them: in a new pack
    assert reader.read([f"{later}:cluster/stack.yaml"])[0].data == b"v: 2\n"  # type: ignore[union-attr]  # the object exists


def test_not_a_repository_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(GitError, match=r"git cat-file failed \(exit 128\): .*not a git repository"):
        ObjectReader(tmp_path).read(["HEAD"])


def test_close_ends_the_process(config_repo: ConfigRepo) -> None:
    sha = config_repo.commit({"cluster/stack.yaml": "v: 1\n"})
    reader = ObjectReader(config_repo.builder.path / ".git")
    reader.read([sha])
    assert reader._proc is not None
    popen = reader._proc._popen
    reader.close()
    assert popen.returncode == 0
    assert reader.read([sha])[0] is not None  # and a later read starts another
    reader.close()
