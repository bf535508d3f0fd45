"""The `values` of the template context (docs/reference/templates.md): facts about the cluster's
cloud account and the outputs of the stacks applied so far. The engine gathers them and passes them
in.

The keys, as CLM names them where CLM has them:

- `availability_zones`: the zones the cluster uses, sorted (a list of names).
- `subnets`: subnet id by zone, plus `*`: every zone's subnet, comma-separated.
- `hosted_zone`: the DNS zone of the API server's host.
- `vpc_ipv4_cidr`, `load_balancer_certificate`, `node_labels`, `apiserver_count`.
- `stack_outputs`: outputs of the stacks applied so far in this run (the main stack first, then
  each `cf-manifests/` stack), by output key; later stacks' templates can use earlier outputs.

Offline (`clmgit render`, `clmgit diff`) there is no cloud to ask, so `placeholder_values` derives
stand-ins from the registry record alone — the same record gives the same placeholders — and
every stack output reads as `<stack output KEY>`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from clmgit.config.helpers import ALL_ZONES
from clmgit.model import Cluster
from clmgit.urls import url_host

STACK_OUTPUTS = "stack_outputs"


class PlaceholderOutputs(Mapping[str, str]):
    """Stack outputs not known yet: any key reads as a visible placeholder."""

    def __getitem__(self, key: str) -> str:
        return f"<stack output {key}>"

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def placeholder_values(cluster: Cluster) -> dict[str, Any]:
    """Stand-in `values` for rendering without a cloud account."""
    region = cluster.region or "region"
    zones = [f"{region}{letter}" for letter in "abc"]
    subnets = {zone: f"subnet-placeholder-{zone}" for zone in zones}
    return {**cloud_values(cluster, zones=zones, subnets=subnets, vpc_cidr="10.0.0.0/16"),
            "load_balancer_certificate": "<load balancer certificate>",
            STACK_OUTPUTS: PlaceholderOutputs()}


def cloud_values(cluster: Cluster, *, zones: Sequence[str], subnets: Mapping[str, str],
                 vpc_cidr: str) -> dict[str, Any]:
    """The `values` of a cluster from the facts its account gives
    (`clmgit.adapters.aws.ec2.network`): the zones, the subnet per zone (and `*`, every
    zone's), the VPC's CIDR."""
    by_zone = {**subnets, ALL_ZONES: ",".join(subnets[z] for z in zones if z in subnets)}
    return {
        "availability_zones": list(zones),
        "subnets": by_zone,
        "hosted_zone": hosted_zone(cluster.api_server_url),
        "vpc_ipv4_cidr": vpc_cidr,
        "load_balancer_certificate": "",
        "node_labels": "lifecycle-status=ready",
        "apiserver_count": "1",
    }


def hosted_zone(api_server_url: str) -> str:
    """The DNS zone of the API server: its host without the first label."""
    return url_host(api_server_url).partition(".")[2]
