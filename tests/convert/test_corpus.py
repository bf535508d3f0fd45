"""kubernetes-on-aws (../shared/corpus): every file of `cluster/` converts on every channel, and
the converted templates load in the project's Jinja environment. (How long a conversion takes
is measured by bench/convert.py, not here: a timed assertion fails on a busy machine.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clmgit.config.templates import make_environment
from clmgit.convert.migrate import read_source
from clmgit.convert.tree import convert_tree
from tests.helpers.data import corpus_or_skip

BUNDLE = corpus_or_skip()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("corpus") / "koa.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(repo)], check=True)
    return repo


@pytest.mark.parametrize("channel", ["dev", "alpha", "beta", "stable"])
def test_every_file_of_cluster_converts_and_loads(corpus: Path, channel: str) -> None:
    files = read_source(str(corpus), channel).files
    conversion = convert_tree(files)
    assert conversion.refused == []
    assert len(conversion.files) == len(files) >= 260
    env = make_environment()
    for path, text in conversion.files.items():
        env.parse(text, path)
