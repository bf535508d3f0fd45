"""The report as one self-contained HTML page: styles, script and data inline, nothing fetched,
so it works from file://, as a CI artifact and on GitHub Pages.

The template is clmgit's own (not a config repo's), so this environment is not sandboxed; it
escapes every value (autoescape) and fails on a missing one (StrictUndefined). The cluster
table's rows travel as inline JSON that the page's script filters, sorts and draws a screenful
at a time, so 10,000 clusters cost one table's worth of DOM.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

import jinja2
from markupsafe import Markup

from clmgit.model import short_version
from clmgit.promotion.status import STATES
from clmgit.report.model import ABSENT, Cell, GroupView, Report

#: The page loads nothing: inline styles and script only, no fetch, no image, no font.
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "base-uri 'none'; form-action 'none'")
#: The cluster table's columns, in the order of each row of the inline JSON.
CLUSTER_COLUMNS = ("alias", "id", "environment", "channel", "group", "desired", "applied",
                   "state", "applied_at", "problems", "health")


def render_html(report: Report) -> str:
    return _template().render(
        r=report, absent=ABSENT, csp=CSP, states=STATES, gate_text=gate_text, cell_text=cell_text,
        short=short_version,
        style=Markup(_asset("report.css")), script=Markup(_asset("report.js")),
        data=Markup(_json_for_script(table_data(report))),
    )


def table_data(report: Report) -> dict[str, Any]:
    """The cluster table as the page's script reads it: column names and one array per row."""
    return {
        "columns": CLUSTER_COLUMNS,
        "states": STATES,
        "commit_url": report.commit_url,
        "rows": [
            [c.alias, c.id, c.environment, c.channel, c.group, c.desired_sha or "",
             c.applied_sha, c.state, c.applied_at, "; ".join(c.problems) or c.reason,
             c.health]
            for c in report.clusters
        ],
    }


def gate_text(g: GroupView) -> list[str]:
    """The gate figures of a group as short phrases, shared by the page and the Markdown."""
    out = [f"gate {g.gate}"]
    if g.behind is not None:
        out.append(f"{g.behind} behind")
    if g.applied_in_source is not None:
        out.append("applied in source {}/{}".format(*g.applied_in_source))
    if g.soak_left is not None:
        out.append("soaked" if g.soak_left == "0s" else f"soak {g.soak_left} left")
    out.append(f"health {g.health or ABSENT}")
    return out


def cell_text(cell: Cell) -> str:
    """A matrix cell in words (colour only repeats it)."""
    if not cell.pinned and not cell.applied:
        return ABSENT
    parts = ["pinned" if cell.pinned else "not pinned"]
    if cell.clusters:
        parts.append(f"applied {cell.applied}/{cell.clusters}")
    if cell.healthy is not None:
        parts.append(f"healthy {cell.healthy}/{cell.clusters}")
    return " · ".join(parts)


def _json_for_script(data: Any) -> str:
    """JSON that cannot end its <script> element early or open a comment in it."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("clmgit.report", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )
    return env.get_template("report.html.j2")


@cache
def _asset(name: str) -> str:
    return files("clmgit.report").joinpath("templates", name).read_text(encoding="utf-8")
