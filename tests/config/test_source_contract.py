"""The `ConfigSource` contract, held by the git and directory sources and by the in-memory double
(`clmgit_sandbox.doubles.StaticConfigSource`): the same commit reads as the same tree — only
what is below `cluster/`, every byte as written, in git's order, listed alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from clmgit_sandbox.configrepo import ConfigRepoBuilder
from clmgit_sandbox.doubles import StaticConfigSource

from clmgit.adapters.git import GitRepo
from clmgit.config.source import ConfigSource, DirectoryConfigSource, GitConfigSource
from clmgit.errors import GitError

FILES = {
    "cluster/stack.yaml": "a: 1\n",
    "cluster/a.yaml": "first\n",
    "cluster/a/b.yaml": "below a/\n",  # git orders a directory as its name and a slash
    "cluster/a-b.yaml": "dash\n",
    "cluster/manifests/x/deep/file.yaml": "b: ü\n",
    "cluster/node-pools/worker/userdata.clc.yaml": "\r\nkept as written\n",
    "README.md": "not config\n",
    "clusterish/file.yaml": "not config either\n",
}
CONFIG = {p: t.encode() for p, t in sorted(FILES.items()) if p.startswith("cluster/")}

Made = tuple[ConfigSource, str]


def from_git(tmp_path: Path) -> Made:
    builder = ConfigRepoBuilder(tmp_path / "config")
    sha = builder.commit("dev", FILES, "A tree")
    return GitConfigSource(GitRepo(builder.path)), sha


def from_directory(tmp_path: Path) -> Made:
    for path, text in FILES.items():
        (tmp_path / "work" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "work" / path).write_bytes(text.encode())
    return DirectoryConfigSource(tmp_path / "work"), "any"


def from_memory(tmp_path: Path) -> Made:
    return StaticConfigSource({"c0ffee": FILES}), "c0ffee"


SOURCES: dict[str, Callable[[Path], Made]] = {
    "git": from_git, "directory": from_directory, "memory": from_memory}


@pytest.fixture(params=sorted(SOURCES))
def made(request: pytest.FixtureRequest, tmp_path: Path) -> Made:
    return SOURCES[request.param](tmp_path)


def test_a_commit_reads_as_exactly_its_cluster_tree_in_gits_order(made: Made) -> None:
    source, sha = made
    tree = source.files(sha)
    assert list(tree) == list(CONFIG)
    assert {path: tree[path] for path in tree} == CONFIG
    assert len(tree) == len(CONFIG)


def test_directories_list_alike(made: Made) -> None:
    source, sha = made
    tree = source.files(sha)
    assert tree.listdir("cluster") == ["cluster/a-b.yaml", "cluster/a.yaml", "cluster/stack.yaml"]
    assert tree.subdirs("cluster") == ["a", "manifests", "node-pools"]
    assert tree.listdir("cluster/a") == ["cluster/a/b.yaml"]


def test_the_same_commit_is_the_same_tree(made: Made) -> None:
    source, sha = made
    assert source.files(sha) is source.files(sha)


@pytest.mark.parametrize("kind", ["git", "memory"])
def test_an_unknown_commit_is_a_git_error(kind: str, tmp_path: Path) -> None:
    source, _ = SOURCES[kind](tmp_path)
    with pytest.raises(GitError, match=f"commit {'0' * 40} does not exist"):
        source.files("0" * 40)
