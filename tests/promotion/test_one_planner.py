"""One planner answers `status --by group`, `promote --dry-run` and the report: for random
fleets — one or two config sources, pins, gates, applied versions and health verdicts — the
three agree on every group, in real repositories through the CLI as users run it."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from clmgit.registry.file import clusters_yaml
from clmgit.report.gather import gather
from clmgit.timestamps import format_timestamp
from clmgit.workspace import open_workspace
from tests.helpers.cli import run_cli

#: What `promote --dry-run -o json` does for each verdict of `status --by group`.
OUTCOME = {"open": (0, "dry-run"), "up to date": (0, "nothing-to-do"),
           "refused": (1, "refused"), "error": (1, None)}
GROUPS = ("canary", "default")


@st.composite
def fleets(draw: st.DrawFn) -> dict[str, object]:
    return {
        "sources": draw(st.sampled_from((1, 2))),
        "applied_in_source": draw(st.booleans()),
        "groups_before": draw(st.sampled_from((None, "applied", "healthy"))),
        "healthy": draw(st.booleans()),
        "soak": draw(st.sampled_from((None, "30m", "3h"))),
        "frozen": draw(st.booleans()),
        "pins": {g: draw(st.sampled_from(("none", "old", "new"))) for g in GROUPS},
        "dev": (draw(st.sampled_from(("none", "old", "new"))), draw(st.booleans())),
        "canary": (draw(st.sampled_from(("old", "new"))), draw(st.booleans())),
    }


def _build(root: Path, f: dict[str, object]) -> Path:
    """dev has two commits in every source (old, new); beta's groups are pinned as drawn."""
    names = ["main", "addons"][: int(f["sources"])]  # type: ignore[call-overload]  # an int
    builders = {n: ConfigRepoBuilder(root / n) for n in names}
    for n, b in builders.items():
        b.commit("dev", {f"cluster/{n}.yaml": "v: 1\n"}, f"{n} v1")
        b.git("branch", "beta", "dev")
        b.commit("dev", {f"cluster/{n}.yaml": "v: 2\n"}, f"{n} v2")
    versions = {age: {n: b.sha("dev" if age == "new" else "dev~1") for n, b in builders.items()}
                for age in ("old", "new")}

    def pin(age: str) -> str:
        pins = versions[age]
        if len(pins) == 1:
            return f"    sha: {pins['main']}\n"
        return "    sha: {" + ", ".join(f"{n}: {s}" for n, s in pins.items()) + "}\n"

    def status(age: str, healthy: bool) -> dict[str, object]:
        if age == "none":
            return {}
        now = datetime.now(UTC)
        version = ";".join(f"{n}={s}" for n, s in versions[age].items()) if len(names) > 1 \
            else versions[age]["main"]
        version += "#h"
        out: dict[str, object] = {"current_version": version,
                                  "applied_at": format_timestamp(now - timedelta(hours=1))}
        if healthy:
            out["health"] = {"state": "healthy", "version": version, "reasons": [],
                             "observed_at": format_timestamp(now - timedelta(minutes=1)),
                             "healthy_since": format_timestamp(now - timedelta(minutes=50))}
        return out

    gates = [f"  applied_in_source: {str(f['applied_in_source']).lower()}\n"]
    if f["groups_before"]:
        gates.append(f"  groups_before: {f['groups_before']}\n")
    if f["healthy"]:
        gates.append("  healthy_in_source: {stable_for: 10m}\n")
    if f["soak"]:
        gates.append(f"  soak: {f['soak']}\n")
    pins: dict[str, str] = f["pins"]  # type: ignore[assignment]  # drawn as such
    beta = ("channel: beta\nsource: dev\n" + f"frozen: {str(f['frozen']).lower()}\n"
            + "gates:\n" + "".join(gates) + "groups:\n"
            + "  - name: canary\n    selector: {alias: \"*-canary\"}\n"
            + (pin(pins["canary"]) if pins["canary"] != "none" else "")
            + "  - name: default\n" + (pin(pins["default"]) if pins["default"] != "none" else ""))
    dev: tuple[str, bool] = f["dev"]  # type: ignore[assignment]  # drawn as such
    canary: tuple[str, bool] = f["canary"]  # type: ignore[assignment]  # drawn as such
    records = [
        cluster_record("aws:1:eu-central-1:dev-1", channel="dev", status=status(*dev)),
        cluster_record("aws:1:eu-central-1:b-canary", channel="beta", alias="b-canary",
                       status=status(*canary)),
        cluster_record("aws:1:eu-central-1:beta-1", channel="beta"),
    ]
    settings_text = "" if len(names) == 1 else (
        f"sources:\n  - name: main\n  - name: addons\n    repo: {root / 'addons'}\n")
    files = {"channels/dev.yaml": "channel: dev\n", "channels/beta.yaml": beta,
             "clusters.yaml": clusters_yaml(records)}
    if settings_text:
        files["clmgit.yaml"] = settings_text
    builders["main"].commit("main", files, "Channels and clusters")
    return root / "main"


# Each example builds real repositories: no shrinking (a failure prints its whole fleet).
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(fleets())
def test_status_promote_and_the_report_agree(fleet: dict[str, object]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = str(_build(Path(tmp), fleet))
        status = run_cli("--repo", repo, "status", "--by", "group", "--channel", "beta",
                         "-o", "json")
        assert status.code == 0, status.err
        rows = {r["group"]: r["gate"] for r in json.loads(status.out)["items"]}
        report = gather(open_workspace(repo))
        [beta] = [ch for ch in report.channels if ch.name == "beta"]
        for group in GROUPS:
            dry = run_cli("--repo", repo, "promote", "dev", "beta", "--group", group,
                          "--dry-run", "-o", "json")
            outcome = (json.loads(dry.out)["result"] or {}).get("outcome")
            assert (dry.code, outcome) == OUTCOME[rows[group]], (group, rows, dry.err)
            assert {g.name: g.gate for g in beta.groups}[group] == rows[group]
