"""The edge-case table's machinery: a case's judge data (the Go judge's JSON, see
tests/helpers/gojudge/main.go) as clmgit's Python data, and the template rendered by clmgit both
ways — converted to Jinja and rendered in the project's environment, and by clmgit's Go evaluator.

An outcome is the text rendered, or why there is none: `refused` (convert said no, with file,
line and construct) or `error` (the render failed). The table (`test_go_table.py`) holds each
case to Go's answer: the same text, or (where Go fails) a failure; a refusal is always allowed,
since it is said out loud, never silent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clmgit.config.clmfuncs import GoMap, clm_functions
from clmgit.config.computed import NO_POOL, ClmInstance, clm_cluster, clm_pool
from clmgit.config.offline import OfflineEc2
from clmgit.config.templates import make_environment
from clmgit.convert import evaluator
from clmgit.convert.emitter import Refused, to_jinja
from clmgit.convert.parser import GoTemplateError, parse
from clmgit.model import Cluster, NodePool

NAME = "cluster/manifests/edge/case.yaml"
FUNCTIONS = clm_functions(ec2=OfflineEc2())
ENV = make_environment()
ENV.globals.update(FUNCTIONS)


@dataclass(frozen=True)
class Outcome:
    output: str | None = None
    error: str | None = None
    refused: str | None = None

    @property
    def failed(self) -> bool:
        return self.output is None


def go_outcome(answer: Mapping[str, str]) -> Outcome:
    """The judge's answer ({"output"} or {"error"}) as an outcome."""
    return Outcome(output=answer.get("output"), error=answer.get("error"))


def python_data(data: Mapping[str, Any]) -> dict[str, Any]:
    """The judge's data as clmgit's renderer builds CLM's: `Cluster` and `NodePool` through
    `clm_cluster`/`clm_pool`, `Values` a `GoMap`, typed values ({"__go": ...}) as their Python
    stand-ins."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "Cluster":
            out[key] = None if value is None else clm_cluster(_cluster(value))
        elif key == "NodePool":
            out[key] = NO_POOL if value is None else clm_pool(_pool(value))
        elif key == "Values":
            out[key] = GoMap(_value(value))
        else:
            out[key] = _value(value)
    return out


def _pool(raw: Mapping[str, Any]) -> NodePool:
    return NodePool(raw.get("Name", ""), raw.get("Profile", ""),
                    tuple(raw.get("InstanceTypes") or ()), raw.get("DiscountStrategy", ""),
                    raw.get("MinSize", 0), raw.get("MaxSize", 0),
                    dict(raw.get("ConfigItems") or {}))


def _cluster(raw: Mapping[str, Any]) -> Cluster:
    return Cluster(
        id=raw.get("ID", ""), alias=raw.get("Alias", ""), local_id=raw.get("LocalID", ""),
        infrastructure_account=raw.get("InfrastructureAccount", ""),
        region=raw.get("Region", ""), api_server_url=raw.get("APIServerURL", ""),
        environment=raw.get("Environment", ""), channel=raw.get("Channel", ""),
        provider=raw.get("Provider", ""), criticality_level=raw.get("CriticalityLevel", 0),
        lifecycle_status=raw.get("LifecycleStatus", ""), owner=raw.get("Owner", ""),
        config_items=dict(raw.get("ConfigItems") or {}),
        node_pools=tuple(_pool(p) for p in raw.get("NodePools") or ()))


def _value(value: Any) -> Any:
    if isinstance(value, list):
        return [_value(v) for v in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("__go")
    if kind is None:
        return {k: _value(v) for k, v in value.items()}
    if kind == "nil":
        return None
    if kind == "float64":
        return float(value["v"])
    if kind == "map[string]string":
        return dict(value["v"])
    if kind == "Instance":
        return ClmInstance(**value["v"])
    raise ValueError(f"unknown __go type {kind!r}")


def converted(template: str, data: Mapping[str, Any]) -> Outcome:
    """`template` converted and rendered in the project's Jinja environment."""
    try:
        jinja = to_jinja(parse(template, NAME))
    except Refused as e:
        return Outcome(refused=str(e))
    except GoTemplateError as e:
        return Outcome(error=str(e))
    try:
        return Outcome(output=ENV.from_string(jinja).render(**python_data(data)))
    except Exception as e:  # noqa: BLE001 - any failure is the outcome
        return Outcome(error=f"{type(e).__name__}: {e}")


def evaluated(template: str, data: Mapping[str, Any]) -> Outcome:
    """`template` rendered by clmgit's Go evaluator with CLM's functions."""
    try:
        return Outcome(output=evaluator.render(parse(template, NAME), python_data(data),
                                               FUNCTIONS))
    except GoTemplateError as e:
        return Outcome(error=str(e))
