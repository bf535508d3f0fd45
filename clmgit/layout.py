"""A config repository's layout, chosen by `clmgit.yaml` at the top of the control branch.

`layout: clmgit` (the default, also when the file is missing) is clmgit's own layout (README,
*The config repo*). `layout: clm` reads `cluster/` the way Zalando's Cluster Lifecycle Manager
does and names, tags and orders the CloudFormation stacks as CLM does, so that clmgit takes over
clusters CLM created instead of making a second set of stacks:

- the main stack from `cluster/cluster.yaml`, named `<local_id>`;
- the etcd stack from `cluster/etcd/stack.yaml` (provider `zalando-aws` only, as CLM's
  `--manage-etcd-stack`; `manage_etcd_stack: false` turns it off), named by the config item
  `etcd_stack_name` (default `etcd-cluster-etcd`), applied before the main stack;
- `cf-manifests/*` stacks named by their template's `Metadata.StackName`;
- node-pool stacks `nodepool-<pool>-<id with ':' as '-'>`, master pools first; pools of profile
  `worker-karpenter` get no stack: their `provisioners.yaml` is applied to the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from clmgit.errors import ConfigError

SETTINGS_PATH = "clmgit.yaml"
CLMGIT = "clmgit"
CLM = "clm"
LAYOUTS = (CLMGIT, CLM)


@dataclass(frozen=True)
class Layout:
    name: str = CLMGIT
    #: CLM's `--manage-etcd-stack`: apply `cluster/etcd/stack.yaml` (layout `clm` only).
    manage_etcd_stack: bool = True

    @property
    def clm(self) -> bool:
        return self.name == CLM


DEFAULT = Layout()
CLM_LAYOUT = Layout(CLM)


def parse_settings(data: bytes | None, where: str = SETTINGS_PATH) -> Layout:
    """The layout `clmgit.yaml` selects; the default when there is no such file. Anything
    malformed is refused with one sentence naming the file and the key. The keys of config
    sources (`sources`, `allow_override`) are read by `clmgit.sources`."""
    raw = load_settings(data, where)
    if not raw:
        return DEFAULT
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} "
                          "(known keys: layout, manage_etcd_stack) nor a key of config "
                          "sources (sources, allow_override)")
    name = raw.get("layout", CLMGIT)
    if name not in LAYOUTS:
        raise ConfigError(f"{where}: key 'layout' must be one of {', '.join(LAYOUTS)}, "
                          f"not {name!r}")
    etcd = raw.get("manage_etcd_stack", True)
    if not isinstance(etcd, bool):
        raise ConfigError(f"{where}: key 'manage_etcd_stack' must be true or false, "
                          f"not {etcd!r}")
    return Layout(name, manage_etcd_stack=etcd)


_KEYS = ("layout", "manage_etcd_stack", "sources", "allow_override")


def load_settings(data: bytes | None, where: str = SETTINGS_PATH) -> dict[str, Any]:
    """`clmgit.yaml` as a mapping ({} when there is none), or one sentence on what is wrong."""
    if data is None:
        return {}
    try:
        raw: Any = yaml.safe_load(data)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(f"{where} is not valid YAML{line}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a mapping of settings, such as 'layout: clm'")
    return raw
