"""The report as Markdown, for a pull request comment or GitHub Actions' step summary: the
pipeline, where the newest changes are, the clusters that are not in sync (the first ones) and
the latest history. GitHub renders it; a terminal reads it too. Every text from input goes
through `clmgit.mdtext` (`_esc`, `_code`): only the links and emphasis written here are markup."""

from __future__ import annotations

from collections.abc import Sequence

from clmgit import mdtext
from clmgit.model import SHA_RE, short_version
from clmgit.promotion.history import Entry
from clmgit.report.html import cell_text, gate_text
from clmgit.report.model import ABSENT, Report

#: Rows of each long table; the HTML page has them all.
CLUSTER_ROWS = 50
CHANGE_ROWS = 10
HISTORY_ROWS = 10


def render_markdown(report: Report) -> str:
    out = [f"## clmgit report: {_esc(report.repository)}", "",
           f"Control branch {_code(report.control_branch)} at "
           f"{_sha(report, report.control_sha)}, generated {_esc(report.generated_at)}.", "",
           f"**{len(report.clusters)} clusters**: {_counts(report.states)}", ""]
    out += _pipeline(report)
    out += _changes(report)
    out += _clusters(report)
    out += _history(report)
    return "\n".join(out).rstrip("\n") + "\n"


def _pipeline(report: Report) -> list[str]:
    rows = []
    for ch in report.channels:
        frozen = (f"frozen: {ch.freeze_reason}" if ch.freeze_reason else "frozen") \
            if ch.frozen else "no"
        frozen += f", {ch.window}" if ch.window else ""
        for g in ch.groups:
            why = f": {g.refusals[0]}" if g.refusals else ""
            more = f" (+{len(g.refusals) - 1} more)" if len(g.refusals) > 1 else ""
            rows.append([_esc(ch.name), _esc(g.name), _sha(report, g.pinned_sha),
                         _esc(ch.source or ABSENT), _esc(frozen),
                         _esc(", ".join(gate_text(g)) + why + more), _counts(g.states)])
    return ["### Pipeline", "",
            *_table(("channel", "group", "pin", "from", "frozen", "gates", "clusters"), rows)]


def _changes(report: Report) -> list[str]:
    if not report.changes:
        return []
    heads = ["commit", "change", *(_esc(f"{c.channel}/{c.group}") for c in report.columns)]
    rows = [[_sha(report, ch.sha), _esc(ch.subject), *(_esc(cell_text(c)) for c in ch.cells)]
            for ch in report.changes[:CHANGE_ROWS]]
    return ["### Where each change to cluster/ is", "", *_table(heads, rows)]


def _clusters(report: Report) -> list[str]:
    # In sync but crash-looping is not done: an unhealthy or failed cluster is listed too.
    busy = [c for c in report.clusters if c.state != "in-sync"
            or (c.health or "").startswith(("unhealthy", "failed"))]
    if not busy:
        return ["### Clusters", "", "Every cluster is in sync.", ""]
    rows = [[_esc(c.alias or c.id), _esc(c.channel), _esc(c.group or ABSENT),
             _sha(report, c.desired_sha), _sha(report, c.applied_sha), _esc(c.state),
             _esc("; ".join(c.problems) or c.reason) or ABSENT, _esc(c.health or ABSENT)]
            for c in busy[:CLUSTER_ROWS]]
    more = [f"…and {len(busy) - CLUSTER_ROWS} more.", ""] if len(busy) > CLUSTER_ROWS else []
    return ["### Clusters not in sync or not healthy", "",
            *_table(("cluster", "channel", "group", "desired", "applied", "state", "why",
                     "health"), rows), *more]


def _history(report: Report) -> list[str]:
    if not report.history:
        return []
    rows = [[_esc(e.date), _esc(e.action), _esc(e.channel or ABSENT),
             _esc(", ".join(e.groups) or ABSENT),
             _sha(report, e.sha), _sha(report, e.commit),
             _override(report, e) if e.overrides else ABSENT,
             _esc(e.subject)]
            for e in report.history[:HISTORY_ROWS]]
    return ["### History", "",
            *_table(("date", "action", "channel", "groups", "to", "commit", "override", "change"),
                    rows)]


def _override(report: Report, e: Entry) -> str:
    reasons = report.override_reasons.get(e.commit, ())
    return f"**! {_esc('; '.join(e.overrides))}**" + "".join(f"<br>{_esc(r)}" for r in reasons)


def _table(heads: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads),
            *("| " + " | ".join(r) + " |" for r in rows), ""]


def _sha(report: Report, sha: str | None) -> str:
    if not sha:
        return ABSENT
    if not SHA_RE.fullmatch(sha):  # several sources' version, or a registry's any text
        return _esc(short_version(sha)[:60])
    url = report.link(sha)
    return mdtext.link(f"`{sha[:7]}`", url) if url else f"`{sha[:7]}`"


def _counts(states: dict[str, int]) -> str:
    return _esc(", ".join(f"{n} {state}" for state, n in states.items()) or "none")


_esc = mdtext.text
_code = mdtext.code
