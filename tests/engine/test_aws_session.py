"""Sessions per cluster: the cluster's own region, one reader of botocore's service models."""

from __future__ import annotations

import dataclasses

import botocore.loaders
import botocore.session
import pytest

from clmgit.adapters.aws.identity import session_for
from clmgit.adapters.aws.session import make_client
from clmgit.errors import ConfigError
from tests.helpers.configrepo import cluster as make_cluster


def test_each_cluster_gets_its_region_and_the_models_are_read_once(
        monkeypatch: pytest.MonkeyPatch, moto_endpoint: str) -> None:
    # A new reader per botocore session, as outside the tests (conftest.py shares one).
    monkeypatch.setattr(botocore.session, "create_loader", botocore.loaders.create_loader)
    frankfurt = dataclasses.replace(make_cluster(id="a"), region="eu-central-1")
    dublin = dataclasses.replace(make_cluster(id="b"), region="eu-west-1")
    make_client(session_for(frankfurt), "ec2")  # whatever an earlier test left unread
    reads: list[str] = []
    load = botocore.loaders.JSONFileLoader.load_file

    def counted(self: botocore.loaders.JSONFileLoader, path: str) -> object:
        reads.append(path)
        return load(self, path)

    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "load_file", counted)
    clients = [make_client(session_for(c), "ec2") for c in (frankfurt, dublin, dublin)]

    assert [c.meta.region_name for c in clients] == ["eu-central-1", "eu-west-1", "eu-west-1"]
    assert reads == []


def test_a_cluster_without_a_region_is_refused() -> None:
    with pytest.raises(ConfigError, match="has no region"):
        session_for(dataclasses.replace(make_cluster(id="a"), region=""))


def test_clients_have_bounded_timeouts_and_honour_aws_max_attempts(
        monkeypatch: pytest.MonkeyPatch, moto_endpoint: str) -> None:
    from clmgit.adapters.aws.session import CONNECT_TIMEOUT, READ_TIMEOUT, base_session

    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "7")
    config = make_client(base_session("eu-central-1"), "cloudformation").meta.config

    assert (config.connect_timeout, config.read_timeout) == (CONNECT_TIMEOUT, READ_TIMEOUT)
    assert config.retries == {"mode": "standard", "total_max_attempts": 7}
