"""Symbolic links in `cluster/` (CLM's layout): followed inside `cluster/` — to files and to
directories, through other links — and refused with one sentence when they leave it, point
nowhere or loop. Real links, committed by real git (mode 120000)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from clmgit.adapters.git import GitRepo
from clmgit.config.source import DirectoryConfigSource, GitConfigSource
from clmgit.errors import ConfigError


def commit(repo: Path, files: dict[str, str], links: dict[str, str]) -> str:
    """A commit of `files` and symbolic links (path → target) in a fresh repository."""
    if not (repo / ".git").exists():
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    for path, target in links.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, repo / path)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tree"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def read(repo: Path, sha: str, *, follow: bool = True) -> dict[str, bytes]:
    return dict(GitConfigSource(GitRepo(repo), follow_symlinks=follow).files(sha))


def test_links_inside_cluster_read_as_what_they_point_to(tmp_path: Path) -> None:
    sha = commit(tmp_path, {
        "cluster/node-pools/worker-default/stack.yaml": "pool: 1\n",
        "cluster/node-pools/worker-default/userdata.yaml": "user: 1\n",
        "cluster/shared/a.yaml": "a: 1\n",
        "cluster/shared/deep/b.yaml": "b: 1\n",
    }, {
        # a profile that is another profile, a file, a link to a link, a directory
        "cluster/node-pools/worker-spot": "worker-default",
        "cluster/manifests/x/a.yaml": "../../shared/a.yaml",
        "cluster/manifests/x/again.yaml": "a.yaml",
        "cluster/manifests/y": "../shared",
    })

    tree = read(tmp_path, sha)

    assert tree["cluster/node-pools/worker-spot/stack.yaml"] == b"pool: 1\n"
    assert tree["cluster/node-pools/worker-spot/userdata.yaml"] == b"user: 1\n"
    assert tree["cluster/manifests/x/a.yaml"] == b"a: 1\n"
    assert tree["cluster/manifests/x/again.yaml"] == b"a: 1\n"
    assert tree["cluster/manifests/y/deep/b.yaml"] == b"b: 1\n"
    assert "cluster/manifests/y" not in tree


def test_without_following_links_are_skipped_as_before(tmp_path: Path) -> None:
    sha = commit(tmp_path, {"cluster/a.yaml": "a: 1\n"}, {"cluster/b.yaml": "a.yaml"})
    assert read(tmp_path, sha, follow=False) == {"cluster/a.yaml": b"a: 1\n"}


@pytest.mark.parametrize(("target", "message"), [
    ("../README.md", "cluster/b.yaml is a symbolic link to '../README.md', outside cluster/"),
    ("/etc/passwd", "cluster/b.yaml is a symbolic link to '/etc/passwd', outside cluster/"),
    ("missing.yaml", "cluster/b.yaml is a symbolic link to 'missing.yaml', which is not in"),
])
def test_links_that_leave_cluster_or_point_nowhere_are_refused(tmp_path: Path, target: str,
                                                               message: str) -> None:
    sha = commit(tmp_path, {"cluster/a.yaml": "a: 1\n", "README.md": "x\n"},
                 {"cluster/b.yaml": target})
    with pytest.raises(ConfigError) as e:
        read(tmp_path, sha)
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("links", [
    {"cluster/dir/loop": "../dir"},  # a directory that contains itself
    {"cluster/x.yaml": "y.yaml", "cluster/y.yaml": "x.yaml"},
])
def test_a_loop_of_links_is_refused(tmp_path: Path, links: dict[str, str]) -> None:
    sha = commit(tmp_path, {"cluster/dir/a.yaml": "a: 1\n"}, links)
    with pytest.raises(ConfigError, match="lead into each other"):
        read(tmp_path, sha)


def test_a_working_tree_reads_links_as_git_does(tmp_path: Path) -> None:
    commit(tmp_path, {"cluster/shared/a.yaml": "a: 1\n"},
           {"cluster/manifests/x": "../shared", "cluster/b.yaml": "shared/a.yaml"})
    tree = dict(DirectoryConfigSource(tmp_path, follow_symlinks=True).files())
    assert tree == {"cluster/shared/a.yaml": b"a: 1\n", "cluster/manifests/x/a.yaml": b"a: 1\n",
                    "cluster/b.yaml": b"a: 1\n"}

    os.symlink("../../etc/hostname", tmp_path / "cluster/escape.yaml")
    with pytest.raises(ConfigError, match="cluster/escape.yaml is a symbolic link to "
                                          "'../../etc/hostname', outside cluster/"):
        DirectoryConfigSource(tmp_path, follow_symlinks=True).files()
