from __future__ import annotations

import pytest

from clmgit.config.secrets import Masker, is_secret_key, masker_for, secret_values
from clmgit.model import NodePool
from tests.helpers.configrepo import cluster


@pytest.mark.parametrize(("key", "secret"), [
    ("db_password", True), ("API_TOKEN", True), ("client_secret", True), ("ssh_key", True),
    ("keycloak_url", True), ("tokens", True), ("passwordless", True),
    ("replicas", False), ("hosted_zone", False), ("kee", False),
])
def test_secret_looking_keys(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret


def test_secret_values_of_cluster_and_node_pools() -> None:
    record = cluster(
        config_items={"db_password": "hunter22", "replicas": "hunter22-not", "api_key": "true",
                      "short_token": "abc", "empty_secret": ""},
        node_pools=(NodePool(name="p", profile="x", config_items={"pool_token": "pool-tok"}),),
    )
    assert secret_values(record) == {"hunter22", "pool-tok"}


def test_masks_raw_and_base64_forms_longest_first() -> None:
    mask = Masker(["hunter22", "hunter22-extended"])
    text = "a: hunter22\nb: aHVudGVyMjI=\nc: hunter22-extended\nd: hunter2\n"
    assert mask(text) == "a: ***\nb: ***\nc: ***\nd: hunter2\n"


def test_no_secrets_no_change() -> None:
    assert Masker([])("anything") == "anything"
    assert masker_for(cluster(config_items={}))("hunter22") == "hunter22"
