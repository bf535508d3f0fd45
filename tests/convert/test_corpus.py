"""kubernetes-on-aws (../shared/corpus): every file of `cluster/` converts on every channel, and
the converted templates load in the project's Jinja environment."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from clmgit.config.templates import make_environment
from clmgit.convert.tree import convert_tree
from clmgit.sandbox.corpus import corpus_bundle

BUNDLE = corpus_bundle()
if not BUNDLE.exists():
    pytest.skip(f"the corpus is missing: {BUNDLE}", allow_module_level=True)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("corpus") / "koa.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(repo)], check=True)
    return repo


def tree_at(repo: Path, ref: str) -> dict[str, bytes]:
    listing = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "-z", ref, "cluster"],
                             check=True, capture_output=True).stdout
    entries = [e.split(b"\t", 1) for e in listing.split(b"\0") if e]
    blobs = {path.decode(): meta.split()[2].decode() for meta, path in entries
             if meta.split()[1] == b"blob"}
    batch = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"],
                           input="".join(f"{sha}\n" for sha in blobs.values()).encode(),
                           check=True, capture_output=True).stdout
    files, pos = {}, 0
    for path in blobs:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        files[path] = batch[header_end + 1:header_end + 1 + size]
        pos = header_end + 2 + size
    return files


@pytest.mark.parametrize("channel", ["dev", "alpha", "beta", "stable"])
def test_every_file_of_cluster_converts_and_loads(corpus: Path, channel: str) -> None:
    files = tree_at(corpus, channel)
    started = time.perf_counter()
    conversion = convert_tree(files)
    elapsed = time.perf_counter() - started
    assert conversion.refused == []
    assert len(conversion.files) == len(files) >= 260
    env = make_environment()
    for path, text in conversion.files.items():
        env.parse(text, path)
    assert elapsed <= 5.0, f"converting {channel} took {elapsed:.2f} s"
