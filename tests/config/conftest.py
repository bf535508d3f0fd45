"""Fixtures for the configuration tests: a real git config repo built from a dict of files, a
small but complete `cluster/` tree, and registry records (tests/helpers/configrepo.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from clmgit_sandbox.configrepo import ConfigRepoBuilder

from clmgit.model import Cluster
from tests.helpers.configrepo import BASE_FILES, ConfigRepo, cluster


@pytest.fixture
def config_repo(tmp_path: Path) -> ConfigRepo:
    return ConfigRepo(ConfigRepoBuilder(tmp_path / "config"))


@pytest.fixture
def base_files() -> dict[str, str]:
    return dict(BASE_FILES)


@pytest.fixture
def make_cluster() -> Callable[..., Cluster]:
    return cluster
