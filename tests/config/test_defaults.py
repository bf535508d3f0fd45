from __future__ import annotations

import logging

import pytest

from clmgit.config.defaults import parse_defaults, render_defaults, with_defaults
from clmgit.config.source import ConfigTree
from clmgit.config.templates import template_set
from clmgit.errors import ConfigError, TemplateError
from clmgit.model import NodePool
from tests.helpers.configrepo import cluster

PATH = "cluster/config-defaults.yaml"


def defaults_of(text: str, **overrides: object) -> dict[str, str]:
    tree = ConfigTree("sha", {PATH: text.encode()})
    return render_defaults(template_set(tree), cluster(**overrides))


def test_defaults_are_rendered_with_the_cluster_but_not_its_config_items() -> None:
    text = (
        "env: {{ cluster.environment }}\n"
        "pool: {{ cluster.node_pools[0].name }}\n"
        "items: '{{ cluster.config_items | length }}'\n"
    )
    assert defaults_of(text, environment="production", config_items={"a": "1"}) == {
        "env": "production", "pool": "default", "items": "0"}


def test_defaults_cannot_use_values() -> None:
    with pytest.raises(TemplateError, match=r"^cluster/config-defaults.yaml:2: 'values' is undef"):
        defaults_of("a: 1\nb: {{ values.x }}\n")


def test_values_are_kept_as_written() -> None:
    text = "version: 1.10\nflag: yes\ncount: 007\nquoted: 'null'\nempty:\nnull_value: null\n"
    assert defaults_of(text) == {"version": "1.10", "flag": "yes", "count": "007",
                                 "quoted": "null", "empty": "", "null_value": ""}


def test_no_defaults_file_means_no_defaults() -> None:
    tree = ConfigTree("sha", {"cluster/stack.yaml": b""})
    assert render_defaults(template_set(tree), cluster()) == {}
    assert parse_defaults("", PATH) == {}


@pytest.mark.parametrize(("text", "error"), [
    ("a: 1\nb:\n  nested: 2\n", "config-defaults.yaml:2: config items are key: value pairs"),
    ("a: 1\nb: [1, 2]\n", "config-defaults.yaml:2: config items are key: value pairs"),
    ("- a\n", "must be a mapping of config items"),
    ("a: 1\nb: : c\n", "config-defaults.yaml:2: the rendered YAML is malformed"),
])
def test_malformed_defaults_name_file_and_line(text: str, error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        parse_defaults(text, PATH)


def test_a_key_defined_twice_takes_its_last_value_with_a_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="clmgit.config.defaults"):
        items = parse_defaults("a: 1\nb: 2\na: 3\n", PATH + "-dup")
    assert items == {"b": "2", "a": "3"}
    assert "'a' is defined on lines 1 and 3; the last one wins" in caplog.text


def test_registry_items_win_and_node_pools_inherit_unless_they_set_their_own() -> None:
    record = cluster(
        config_items={"a": "registry", "only_cluster": "c"},
        node_pools=(
            NodePool(name="own", profile="p", config_items={"a": "pool", "only_pool": "p"}),
            NodePool(name="inherits", profile="p"),
        ),
    )
    merged = with_defaults(record, {"a": "default", "b": "default"})
    assert merged.config_items == {"a": "registry", "b": "default", "only_cluster": "c"}
    own, inherits = merged.node_pools
    assert own.config_items == {"a": "pool", "b": "default", "only_cluster": "c",
                                "only_pool": "p"}
    assert inherits.config_items == merged.config_items
    assert record.config_items == {"a": "registry", "only_cluster": "c"}  # the record is unchanged
