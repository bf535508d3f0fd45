from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from clmgit.adapters.git import GitRepo
from clmgit.adapters.gitobjects import GitObject
from clmgit.config.source import ConfigTree, DirectoryConfigSource, GitConfigSource
from clmgit.errors import ConfigError, GitError
from tests.helpers.configrepo import ConfigRepo


def test_reads_exactly_the_cluster_tree_at_a_sha(config_repo: ConfigRepo) -> None:
    sha = config_repo.commit({
        "cluster/stack.yaml": "a: 1\n",
        "cluster/manifests/x/deep/file.yaml": "b: ü\n",
        "README.md": "not config\n",
        "clusterish/file.yaml": "not config either\n",
    })
    tree = config_repo.source.files(sha)
    assert dict(tree) == {
        "cluster/stack.yaml": b"a: 1\n",
        "cluster/manifests/x/deep/file.yaml": "b: ü\n".encode(),
    }
    assert tree.ref == sha


def test_an_older_sha_still_reads_its_own_files(config_repo: ConfigRepo) -> None:
    old = config_repo.commit({"cluster/stack.yaml": "v: 1\n", "cluster/gone.yaml": "x\n"})
    new = config_repo.commit({"cluster/stack.yaml": "v: 2\n", "cluster/gone.yaml": None})
    assert config_repo.source.files(old)["cluster/stack.yaml"] == b"v: 1\n"
    assert "cluster/gone.yaml" in config_repo.source.files(old)
    assert dict(config_repo.source.files(new)) == {"cluster/stack.yaml": b"v: 2\n"}


def test_symlinks_and_submodules_are_not_configuration(config_repo: ConfigRepo,
                                                        tmp_path: Path) -> None:
    base = config_repo.commit({"cluster/stack.yaml": "v: 1\n"})
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "index")}

    def git(*args: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", *args], cwd=config_repo.builder.path, env=env, input=data,
                              capture_output=True, check=True).stdout.decode().strip()

    git("read-tree", base)
    link = git("hash-object", "-w", "--stdin", data=b"stack.yaml")
    git("update-index", "--add", "--cacheinfo", f"120000,{link},cluster/link.yaml")
    git("update-index", "--add", "--cacheinfo", f"160000,{base},cluster/submodule")
    sha = git("commit-tree", git("write-tree"), "-p", base, "-m", "odd entries")
    assert dict(config_repo.source.files(sha)) == {"cluster/stack.yaml": b"v: 1\n"}


def test_reads_from_a_bare_repository_without_any_checkout(config_repo: ConfigRepo,
                                                           tmp_path: Path) -> None:
    sha = config_repo.commit({"cluster/stack.yaml": "v: 1\n"})
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(config_repo.builder.path), str(bare)],
                   check=True)
    tree = GitConfigSource(GitRepo(bare)).files(sha)
    assert tree["cluster/stack.yaml"] == b"v: 1\n"


def test_one_read_per_sha_shared_by_every_caller(config_repo: ConfigRepo) -> None:
    sha = config_repo.commit({"cluster/stack.yaml": "v: 1\n"})
    source = config_repo.source
    first = source.files(sha)
    assert source.files(sha) is first
    assert source.files(sha[:10]) is first  # a short SHA resolves to the same cached tree
    assert source.files("dev") is first


def test_the_cache_is_bounded(config_repo: ConfigRepo) -> None:
    shas = [config_repo.commit({"cluster/stack.yaml": f"v: {i}\n"}) for i in range(3)]
    source = GitConfigSource(config_repo.source.repo, max_trees=2)
    first = source.files(shas[0])
    source.files(shas[1])
    source.files(shas[2])  # evicts the least recently used: shas[0]
    again = source.files(shas[0])
    assert again is not first
    assert dict(again) == dict(first)


class CountingSource(GitConfigSource):
    reads = 0

    def _read(self, sha: str) -> ConfigTree:
        self.reads += 1
        time.sleep(0.05)  # long enough for every thread to ask while the read is under way
        return super()._read(sha)


def test_concurrent_callers_at_one_sha_wait_for_a_single_read(config_repo: ConfigRepo) -> None:
    sha = config_repo.commit({"cluster/stack.yaml": "v: 1\n"})
    source = CountingSource(config_repo.source.repo)
    trees: list[ConfigTree] = []
    threads = [threading.Thread(target=lambda: trees.append(source.files(sha))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert source.reads == 1
    assert len(trees) == 8 and all(t is trees[0] for t in trees)


def test_an_unknown_commit_is_a_git_error(config_repo: ConfigRepo) -> None:
    config_repo.commit({"cluster/stack.yaml": "v: 1\n"})
    with pytest.raises(GitError, match="does not exist"):
        config_repo.source.files("deadbeef")
    with pytest.raises(GitError, match=f"commit {'0' * 40} does not exist"):
        config_repo.source.files("0" * 40)


def test_a_commit_without_cluster_dir_is_a_config_error(config_repo: ConfigRepo) -> None:
    sha = config_repo.commit({"README.md": "hi\n"})
    with pytest.raises(ConfigError, match=f"no cluster/ directory at commit {sha[:7]}"):
        config_repo.source.files(sha)


def test_tree_listing_helpers() -> None:
    tree = ConfigTree("x", {"cluster/m/b/2.yaml": b"", "cluster/m/b/1.yaml": b"",
                            "cluster/m/a/x/deep.yaml": b"", "cluster/m/top.yaml": b""})
    assert tree.listdir("cluster/m/b") == ["cluster/m/b/1.yaml", "cluster/m/b/2.yaml"]
    assert tree.listdir("cluster/m") == ["cluster/m/top.yaml"]
    assert tree.subdirs("cluster/m") == ["a", "b"]
    made: list[int] = []

    def first(t: ConfigTree) -> int:
        made.append(1)
        return len(t)

    def again(t: ConfigTree) -> int:
        made.append(1)
        return 0

    assert tree.derived("k", first) == 4
    assert tree.derived("k", again) == 4
    assert made == [1]
    # A derived value made from another (on a fresh tree, so neither exists yet) does not deadlock.
    fresh = ConfigTree("y", {"cluster/a.yaml": b""})
    assert fresh.derived("outer", lambda t: t.listdir("cluster")) == ["cluster/a.yaml"]


@pytest.mark.parametrize("with_cluster_dir", [True, False])
def test_directory_source_reads_a_working_tree(tmp_path: Path, with_cluster_dir: bool) -> None:
    root = tmp_path / "work"
    config = root / "cluster" if with_cluster_dir else root
    (config / "manifests" / "a").mkdir(parents=True)
    (config / "stack.yaml").write_text("v: 1\n")
    (config / "manifests" / "a" / "x.yaml").write_text("x: 1\n")
    (config / ".git").mkdir()
    (config / ".git" / "HEAD").write_text("ref\n")
    tree = DirectoryConfigSource(root).files("ignored")
    assert dict(tree) == {"cluster/stack.yaml": b"v: 1\n", "cluster/manifests/a/x.yaml": b"x: 1\n"}


def test_directory_source_needs_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a directory"):
        DirectoryConfigSource(tmp_path / "missing")


def test_a_new_commit_reads_only_what_it_changed(config_repo: ConfigRepo) -> None:
    files = {f"cluster/manifests/c{i}/app.yaml": f"app: {i}\n" for i in range(5)}
    old = config_repo.commit({**files, "cluster/stack.yaml": "v: 1\n"})
    new = config_repo.commit({"cluster/manifests/c3/app.yaml": "app: changed\n"})
    source = GitConfigSource(config_repo.source.repo)
    asked: list[str] = []
    read = source._objects.read

    def counted(names: Sequence[str]) -> list[GitObject | None]:
        asked.extend(names)
        return read(names)

    source._objects.read = counted  # type: ignore[method-assign]  # a spy on the one reader
    source.files(old)
    first = len(asked)
    asked.clear()
    tree = source.files(new)
    assert dict(tree) == {path: text.encode() for path, text in
                          {**files, "cluster/stack.yaml": "v: 1\n",
                           "cluster/manifests/c3/app.yaml": "app: changed\n"}.items()}
    # the commit, cluster/, manifests/, manifests/c3/ and its file: not the 4 other directories
    assert len(asked) == 5 and first == 2 + 2 + 5 + 5
    assert dict(source.files(old)) == {path: text.encode() for path, text in
                                       {**files, "cluster/stack.yaml": "v: 1\n"}.items()}
