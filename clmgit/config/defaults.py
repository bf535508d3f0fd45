"""`cluster/config-defaults.yaml`: templated default config items, merged under the registry's.

As in CLM, the defaults are rendered with the cluster's registry fields but without its config
items (so a default cannot depend on an item it may be overriding) and without `values`. Every
value is kept as the text written in the file (`1.10` stays `1.10`, `yes` stays `yes`), because
config items are strings; a `null` or empty value is the empty string. The registry's items win;
a node pool inherits the cluster's merged items unless it sets its own.

A key written twice takes its last value, as in CLM (Go's YAML decoder into a map keeps the last),
with a warning naming the key and both lines: kubernetes-on-aws has such keys.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import replace

import yaml

from clmgit.config import yamlfiles
from clmgit.config.computed import defaults_data
from clmgit.config.templates import TemplateSet
from clmgit.errors import ConfigError
from clmgit.model import Cluster, cluster_to_dict

DEFAULTS_PATH = "cluster/config-defaults.yaml"
_NULL_TAG = "tag:yaml.org,2002:null"
log = logging.getLogger(__name__)


def render_defaults(templates: TemplateSet, cluster: Cluster) -> dict[str, str]:
    """The default config items for `cluster`; none if the tree has no defaults file."""
    if DEFAULTS_PATH not in templates.tree:
        return {}
    without_items = cluster_to_dict(replace(cluster, config_items={}))
    # CLM's data too, for converted CLM templates: the cluster without items, no values.
    text = templates.render(DEFAULTS_PATH, {"cluster": without_items, **defaults_data(cluster)})
    return parse_defaults(text, DEFAULTS_PATH)


def parse_defaults(text: str, path: str) -> dict[str, str]:
    """A flat mapping of keys to scalar values, each value as written."""
    return dict(_parse_defaults(text, path))


@functools.lru_cache(maxsize=32)
def _parse_defaults(text: str, path: str) -> tuple[tuple[str, str], ...]:
    """Parsed once per text: clusters alike in the fields the defaults use (environment, region)
    render the same defaults, and a tuple cannot be changed by one of them."""
    root = yamlfiles.compose(text, path)
    if root is None:
        return ()
    if not isinstance(root, yaml.MappingNode):
        raise ConfigError(f"{path}: must be a mapping of config items to values")
    items: dict[str, str] = {}
    lines: dict[str, int] = {}
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + 1
        if not isinstance(key_node, yaml.ScalarNode) or not isinstance(value_node, yaml.ScalarNode):
            raise ConfigError(f"{path}:{line}: config items are key: value pairs of plain values")
        if key_node.value in items:
            log.warning("%s: %r is defined on lines %d and %d; the last one wins, as in CLM",
                        path, key_node.value, lines[key_node.value], line)
            del items[key_node.value]  # its place is that of the last definition
        lines[key_node.value] = line
        items[key_node.value] = "" if value_node.tag == _NULL_TAG else value_node.value
    return tuple(items.items())


def with_defaults(cluster: Cluster, defaults: dict[str, str]) -> Cluster:
    """The cluster with defaults merged under its config items, and its node pools inheriting."""
    items = {**defaults, **cluster.config_items}
    pools = tuple(replace(p, config_items={**items, **p.config_items}) for p in cluster.node_pools)
    return replace(cluster, config_items=items, node_pools=pools)
