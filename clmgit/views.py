"""How each command's results look: one function per result type, as a table or as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from clmgit.output import emit_json, line, note, table

if TYPE_CHECKING:
    from clmgit.promotion.history import Entry
    from clmgit.promotion.preview import GroupPreview
    from clmgit.promotion.promote import Plan
    from clmgit.promotion.status import ClusterState
    from clmgit.promotion.write import Landed


def _short(sha: str | None) -> str:
    return sha[:7] if sha else "-"


def plan(p: Plan, landed: Landed | None, *, as_json: bool) -> None:
    if as_json:
        emit_json(
            {
                "result": "dry-run" if landed is None else "landed",
                "action": p.action,
                "target": p.target,
                "source": p.source,
                "sha": p.sha,
                "changes": p.changes,
                "unchanged": p.unchanged,
                "overrides": p.overrides,
                "branch_move": p.move,
                "commit": landed.commit if landed else None,
                "pushed": bool(landed and landed.pushed),
                "message": p.message,
            }
        )
        return
    head = "would " if landed is None else ""
    verb = "promote" if p.action == "promote" else "roll back"
    for c in p.changes:
        src = f" from {p.source}" if p.source else ""
        line(f"{head}{verb} {p.target}/{c.group}{src}: {_short(c.old)} -> {_short(c.new)}")
    for name in p.unchanged:
        line(f"  {p.target}/{name} already at {_short(p.sha)}")
    for o in p.overrides:
        note(f"override {o}")
    if p.move:
        line(f"{head}move branch {p.move.branch}: {_short(p.move.old)} -> {_short(p.move.new)}")
    if p.commits:
        line(f"brings {len(p.commits)} change(s) to cluster/:")
        for entry in p.commits:
            line(f"  {entry}")
    if landed is None:
        line("dry run: nothing written")
    else:
        where = f"{landed.branch} and pushed" if landed.pushed else landed.branch
        line(f"committed {_short(landed.commit)} on {where}")


def previews(items: Sequence[GroupPreview], *, as_json: bool) -> None:
    if as_json:
        emit_json(
            [
                {
                    "group": p.group,
                    "old": p.old,
                    "new": p.new,
                    "forward": p.forward,
                    "total": p.total,
                    "commits": [
                        {"sha": c.sha, "subject": c.subject, "author": c.author, "date": c.date}
                        for c in p.commits
                    ],
                }
                for p in items
            ]
        )
        return
    for p in items:
        if p.old == p.new:
            line(f"{p.group}: already at {_short(p.new)}")
            continue
        warn = "" if p.forward else "  (not forward: needs --force or is a rollback)"
        line(f"{p.group}: {_short(p.old)}..{_short(p.new)}, {p.total} commit(s) to cluster/{warn}")
        for c in p.commits:
            line(f"  {c.sha[:7]} {c.subject} ({c.author})")
        if p.total > len(p.commits):
            line(f"  ... and {p.total - len(p.commits)} more")


STATE_COLUMNS = ("id", "alias", "environment", "channel", "group", "pinned", "applied", "state")


def states(items: Sequence[ClusterState], *, as_json: bool) -> None:
    if as_json:
        emit_json(
            [
                {
                    "id": s.id,
                    "alias": s.alias,
                    "environment": s.environment,
                    "channel": s.channel,
                    "group": s.group,
                    "pinned_sha": s.pinned_sha,
                    "applied_sha": s.applied_sha or None,
                    "state": s.state,
                    "reason": s.reason,
                }
                for s in items
            ]
        )
        return
    rows: list[list[Any]] = [
        [
            s.id,
            s.alias,
            s.environment,
            s.channel,
            s.group or "-",
            _short(s.pinned_sha),
            _short(s.applied_sha),
            s.state + (f" ({s.reason})" if s.reason else ""),
        ]
        for s in items
    ]
    table(STATE_COLUMNS, rows)


def history(entries: Sequence[Entry], *, as_json: bool) -> None:
    if as_json:
        emit_json(list(entries))
        return
    rows = [[e.date[:16].replace("T", " "), e.author, e.commit[:7], e.subject] for e in entries]
    table(("date", "author", "commit", "change"), rows)
