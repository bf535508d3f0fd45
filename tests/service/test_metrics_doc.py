"""docs/how-to/metrics-and-alerts.md against the code: every metric clmgit serves is in its
tables, and its alert rules parse and name only metrics that exist."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from clmgit.metrics import ControllerMetrics, RegistryMetrics

PAGE = Path(__file__).resolve().parents[2] / "docs/how-to/metrics-and-alerts.md"


def _served() -> set[str]:
    """The metrics' names (a counter's with `_total`), and their samples' names."""
    names = set()
    for registry in (ControllerMetrics().registry, RegistryMetrics().registry):
        for family in text_string_to_metric_families(generate_latest(registry).decode()):
            names.add(family.name + ("_total" if family.type == "counter" else ""))
            names |= {s.name for s in family.samples}
    return names


def test_every_clmgit_metric_is_documented() -> None:
    text = PAGE.read_text()
    documented = set(re.findall(r"^\| `(clmgit_\w+)`", text, re.M))
    served = {n for n in _served() if n.startswith("clmgit_")
              and not n.endswith(("_bucket", "_sum", "_count"))}
    assert served == documented


def test_the_alert_rules_parse_and_name_served_metrics() -> None:
    block = re.search(r"```yaml\n(groups:.*?)```", PAGE.read_text(), re.S)
    assert block is not None
    rules = yaml.safe_load(block.group(1))["groups"][0]["rules"]
    assert [r["alert"] for r in rules] == ["ClmgitClusterFailed", "ClmgitRoundStuck",
                                           "ClmgitNoSuccessfulRound"]
    served = _served()
    for rule in rules:
        for name in re.findall(r"\b((?:clmgit|process)_\w+)", rule["expr"]):
            assert name in served, (rule["alert"], name)
