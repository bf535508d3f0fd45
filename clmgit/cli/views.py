"""How each command's results look: one function per result type, as a table or as
JSON or YAML."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from clmgit import mdtext, timestamps
from clmgit.cli.output import Format, emit, line, note, table
from clmgit.model import short_version

if TYPE_CHECKING:
    from clmgit.cli.results import NothingToDo, PlanOutcome, PullRequestOutcome, SourcedMove
    from clmgit.promotion.freeze import FreezeResult
    from clmgit.promotion.history import Entry
    from clmgit.promotion.preview import GroupPreview
    from clmgit.promotion.status import ClusterState, GroupRow
    from clmgit.reconcile.health import HealthRow


def _clusters(n: int) -> str:
    return f"{n} cluster{'' if n == 1 else 's'}"


def plan(o: PlanOutcome, *, fmt: Format) -> None:
    """A promotion or rollback: what it changes, or would, and where it landed."""
    if fmt is not Format.table:
        emit(o, fmt, kind="Plan", errors=[{"message": r, "exit_code": 1} for r in o.refusals])
        return
    head = "would " if o.branch is None else ""
    for c in o.changes:
        line(f"{head}{o.verb} {o.target}/{c.group}{o.shown_source}: "
             f"{short_version(c.old)} -> {short_version(c.new)} "
             f"({_clusters(c.clusters)})")
    for name in o.unchanged:
        line(f"  {o.target}/{name} already at {short_version(o.sha)}")
    for override in o.overrides:
        note(f"override {override}")
    for n in o.notes:
        line(f"note: {n}")
    if m := o.branch_move:
        line(f"{head}move branch {m.branch}: {short_version(m.old)} -> {short_version(m.new)} "
             f"({m.kind.value})")
    for sm in o.source_moves:  # branches of other config sources
        line(f"{head}move branch {sm.move.branch} of source {sm.source}: "
             f"{short_version(sm.move.old)} -> {short_version(sm.move.new)} ({sm.move.kind.value})")
    if o.commits:
        line(f"brings {len(o.commits)} change(s) to cluster/:")
        for entry in o.commits:
            line(f"  {entry}")
    if o.branch is None:
        line("dry run: nothing written" + (" (the plan is refused)" if o.refusals else ""))
    else:
        where = f"{o.branch} and pushed" if o.pushed else o.branch
        line(f"committed {short_version(o.commit)} on {where}")


def nothing_to_do(o: NothingToDo, *, fmt: Format) -> None:
    if fmt is not Format.table:
        emit(o, fmt, kind="Plan")
        return
    line(f"{o.target} already at {short_version(o.sha)}")


def pull_request(o: PullRequestOutcome, *, fmt: Format) -> None:
    """A promotion proposed as a pull request: nothing local moved, the merge lands it."""
    if fmt is not Format.table:
        emit(o, fmt, kind="PullRequest")
        return
    dry_run = o.pull_request is None
    for c in o.changes:
        line(f"proposes to {o.verb} {o.target}/{c.group}: {short_version(c.old)} -> "
             f"{short_version(c.new)}")
    for override in o.overrides:
        note(f"override {override}")
    on = f"on top of {o.base} at {short_version(o.base_sha)}"
    if dry_run:
        line(f"would push {o.branch} {on} and open or update its pull request in {o.repository}:")
        line(f"  {o.title}")
    else:
        pushed = f"pushed {o.branch}" if o.pushed else f"{o.branch} already holds this change"
        line(f"{pushed} ({short_version(o.commit)} {on})")
        assert o.pull_request is not None
        opened = "opened" if o.created else "updated"
        line(f"{opened} pull request #{o.pull_request.number}: {o.pull_request.url}")
        if o.preview_error:
            note(f"the pull request has no preview: {o.preview_error}")
    if m := o.branch_move_after_merge:
        line(
            f"after the merge, `clmgit sync-branches --push` fast-forwards branch "
            f"{m.branch} to {short_version(m.new)}"
        )
    if dry_run:
        line("dry run: nothing pushed, GitHub not called")
    else:
        line("local branches are unchanged; the merge lands the change")


def previews(items: Sequence[GroupPreview], *, fmt: Format) -> None:
    from clmgit.cli.results import GroupDiff
    from clmgit.promotion.preview import format_report

    if fmt is not Format.table:
        emit([GroupDiff.of(p) for p in items], fmt, kind="DiffList")
        return
    line(format_report(items).rstrip("\n"))


def branch_moves(moves: Sequence[SourcedMove], *, dry_run: bool, fmt: Format) -> None:
    """`sync-branches`: each channel branch moved, or that would move."""
    if fmt is not Format.table:
        emit(list(moves), fmt, kind="BranchMoveList", dry_run=dry_run)
        return
    if not moves:
        line("every channel branch is where its pins are")
    verb = "would move" if dry_run else "moved"
    for m in moves:
        forced = ", forced" if m.override else ""
        source = f"{m.source} " if m.source else ""
        line(f"{verb} {source}{m.branch}: {(m.old or 'none')[:7]} -> {m.new[:7]} "
             f"({m.kind.value}{forced})")


STATE_COLUMNS = ("id", "alias", "environment", "channel", "group", "lifecycle", "pinned",
                 "applied", "state", "health")


def states(items: Sequence[ClusterState], *, frozen: Sequence[tuple[str, str]] = (),
           fmt: Format) -> None:
    """Clusters, then a summary line: counts by state and the frozen channels."""
    from clmgit.promotion.status import health_counts, state_counts

    if fmt is not Format.table:
        emit([_state_data(s) for s in items], fmt, kind="ClusterStatusList",
             summary={"clusters": len(items), "states": state_counts(items),
                      "health": health_counts(items),
                      "frozen": [{"channel": n, "reason": r} for n, r in frozen]})
        return
    rows: list[list[Any]] = [
        [s.id, s.alias, s.environment, s.channel, s.group or "-", s.lifecycle,
         short_version(s.pinned_sha), short_version(s.applied_sha),
         s.state + (f" ({s.reason})" if s.reason else ""), _health_cell(s)]
        for s in items
    ]
    table(STATE_COLUMNS, rows, shrink=("state", "health"))
    counts = ", ".join(f"{n} {state}" for state, n in state_counts(items).items())
    # In sync is not fine when the version crash-loops: the health counts say so.
    health = ", ".join(f"{n} {state}" for state, n in health_counts(items).items())
    plural = "" if len(items) == 1 else "s"
    line(f"{len(items)} cluster{plural}" + (f": {counts}" if counts else "")
         + (f"; health: {health}" if health else ""))
    for name, reason in frozen:
        line(f"channel {name} is frozen" + (f": {reason}" if reason else ""))


def _health_cell(s: ClusterState) -> str:
    """State, for how long, first reason: `healthy 2h`, `unhealthy 5m: Deployment ...`."""
    if not s.health:
        return "-"
    return _health_text(s.health, s.health_since, s.health_reason)


def _health_text(state: str, since: str, reason: str) -> str:

    from clmgit.durations import format_duration
    from clmgit.timestamps import parse_timestamp

    start = parse_timestamp(since)
    held = f" {format_duration(timestamps.now() - start)}" if start else ""
    return f"{state}{held}" + (f": {reason}" if reason else "")


def health_rows(rows: Sequence[HealthRow], *, fmt: Format) -> None:
    """`clmgit health`: a row per cluster with its verdict, then counts by state."""
    if fmt is not Format.table:
        emit(list(rows), fmt, kind="HealthList",
             summary={"clusters": len(rows), "states": dict(Counter(r.state for r in rows))})
        return
    table(("id", "alias", "channel", "version", "health"),
          [[r.id, r.alias, r.channel, short_version(r.version), _health_text(r.state, r.since,
                                                                      "; ".join(r.reasons))]
           for r in rows])
    counts = Counter(r.state for r in rows)
    line(f"{_clusters(len(rows))}" + (": " + ", ".join(f"{n} {state}" for state, n in
                                                        sorted(counts.items())) if rows else ""))
    if any(not r.recorded for r in rows):
        note("some verdicts were not recorded in the registry (see the warnings above)")


def _state_data(s: ClusterState) -> dict[str, Any]:
    # Its fields are all scalars, set in their order: the instance's dict is its data (a fleet
    # is 10,000 of them; to_data would look at every value).
    data: dict[str, Any] = dict(vars(s))
    data["applied_sha"] = s.applied_sha or None  # null, not "", for never applied
    return data


def _gate_cell(r: GroupRow) -> str:
    if not r.refusals:
        return r.gate
    more = f" (+{len(r.refusals) - 1} more)" if len(r.refusals) > 1 else ""
    return f"{r.gate}: {r.refusals[0].removesuffix(' (--force overrides)')}{more}"


def group_rows(rows: Sequence[GroupRow], *, fmt: Format) -> None:
    """`status --by group`: a row per channel group."""
    if fmt is not Format.table:
        emit(list(rows), fmt, kind="GroupStatusList")
        return
    table(
        ("channel", "group", "pin", "clusters", "states", "frozen", "next", "gate"),
        [[r.channel, r.group, short_version(r.pinned_sha), r.clusters,
          ", ".join(f"{n} {state}" for state, n in r.states.items()) or "-",
          ((f"yes: {r.freeze_reason}" if r.freeze_reason else "yes") if r.frozen else "no")
          + (f", {r.window}" if r.window else ""),
          short_version(r.next_sha), _gate_cell(r)]
         for r in rows],
        shrink=("frozen", "gate"),
    )


def history(entries: Sequence[Entry], *, fmt: Format) -> None:
    """Newest first; dates in UTC; an override (a gate or freeze lifted) is marked `!` and
    named, so a bypass never looks like any other row."""
    if fmt is not Format.table:
        emit(list(entries), fmt, kind="HistoryList")
        return
    rows = [[_utc(e.date), e.author, e.commit[:7],
             "-" if e.clusters is None else e.clusters,
             ("! " + ", ".join(e.overrides)) if e.overrides else "", e.subject]
            for e in entries]
    table(("date (UTC)", "author", "commit", "clusters", "override", "change"), rows)


def freeze(r: FreezeResult, *, fmt: Format) -> None:
    if fmt is not Format.table:
        emit(r, fmt, kind="Freeze")
        return
    word = "frozen" if r.action == "freeze" else "unfrozen"
    if r.outcome == "nothing-to-do":
        line(f"{r.channel} is already {word}")
    elif r.outcome == "dry-run":
        subject = (r.message or "").splitlines()[0]
        line(f"would {r.action} {r.channel}: commit {r.file} ({subject})")
        line("dry run: nothing written")
    else:
        pushed = " and pushed" if r.pushed else ""
        line(f"{r.channel} {word} in {short_version(r.commit)}{pushed}")


def _utc(date: str) -> str:
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(date).astimezone(UTC)
    except ValueError:
        return date
    return moment.strftime("%Y-%m-%d %H:%M")


# --- reconcile ---------------------------------------------------------------------------------

if TYPE_CHECKING:
    from clmgit.reconcile.run import Result


def _result_row(r: Result) -> list[str]:
    sha = r.version.partition("#")[0]
    return [r.alias or r.id, r.action, r.outcome, short_version(sha),
            f"{r.seconds:.1f}s" if r.seconds else "", r.detail]


def reconcile_results(results: Sequence[Result], *, fmt: Format,
                      also: Sequence[dict[str, Any]] = (), summary: bool = False) -> None:
    """The results; `also`: errors of the run besides failed clusters (for programs; people
    read them on stderr). `summary`: only the clusters that failed or were skipped, without
    their changes, and the counts (a fleet's run in a few lines)."""
    if fmt is not Format.table:
        emit(list(results), fmt, kind="ReconcileResultList", summary=_counts(results),
             errors=[*({"cluster": r.id, "message": r.detail, "exit_code": 4}
                       for r in results if r.failed),
                     *({"cluster": r.id, "message": r.detail, "exit_code": 5}
                       for r in results if r.lease_held), *also])
        return
    if summary:
        busy = [r for r in results if r.failed or r.lease_held]
    else:
        busy = [r for r in results if r.outcome != "in-sync"]
    if busy:
        table(["CLUSTER", "ACTION", "OUTCOME", "VERSION", "TIME", "DETAIL"],
              [_result_row(r) for r in busy], shrink=("DETAIL",))
        for r in [] if summary else busy:
            for change in r.changes:
                line(f"  {r.alias or r.id}: {change}")
    line(_summary(results))


def _counts(results: Sequence[Result]) -> dict[str, int]:
    return dict(Counter(r.outcome for r in results))


def _summary(results: Sequence[Result]) -> str:
    """`1 applied, 2 in-sync`, in the order outcomes first occur."""
    counts = _counts(results)
    return ", ".join(f"{n} {outcome}" for outcome, n in counts.items()) or "no clusters selected"


def step_summary(results: Sequence[Result], path: str, *, title: str) -> None:
    """Append a Markdown table of the results to GitHub Actions' step summary file; every
    cell and the title shown as text (`clmgit.mdtext`)."""
    rows = [f"| {' | '.join(mdtext.text(c) for c in _result_row(r))} |" for r in results
            if r.outcome != "in-sync"]
    text = [f"### {mdtext.text(title)}", "", mdtext.text(_summary(results)), ""]
    if rows:
        text += ["| cluster | action | outcome | version | time | detail |",
                 "|---|---|---|---|---|---|", *rows, ""]
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")


class Progress:
    """Progress of a reconcile on stderr: a live bar on a terminal, a line per cluster
    otherwise (CI logs). Clusters in sync are counted, not listed."""

    def __init__(self, *, enabled: bool) -> None:
        self._enabled = enabled
        self._total = 0
        self._done = 0
        self._bar: Any = None
        self._steps: dict[str, str] = {}  # cluster id -> what it is doing, while worked on

    def plan(self, count: int) -> None:
        """The run works on `count` clusters; the bar appears now (on a terminal)."""
        import sys

        self._total = count
        if self._enabled and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(TextColumn("reconcile"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("{task.description}"),
                            console=Console(stderr=True), transient=True)
            self._task = self._bar.add_task("", total=count)
            self._bar.start()

    def start(self, cluster_id: str) -> None:
        self._steps[cluster_id] = "applying its configuration"
        if self._bar is not None:
            self._bar.update(self._task, description=cluster_id)

    def event(self, cluster_id: str, text: str) -> None:
        """What the engine does for a cluster: in the live line, or one line each (CI)."""
        self._steps[cluster_id] = text
        if self._bar is not None:
            self._bar.update(self._task, description=f"{cluster_id}: {text}")
        elif self._enabled:
            note(f"{cluster_id}: {text}")

    def interrupted(self) -> None:
        """Says, on the first Ctrl-C, what the run still waits for before it stops."""
        busy = "; ".join(f"{c} ({step})" for c, step in sorted(self._steps.items()))
        waits = f" waiting for {busy};" if busy else ""
        note(f"interrupted: stopping at the next step;{waits} Ctrl-C again aborts at once, "
             "leaving leases until they expire")

    def result(self, r: Result) -> None:
        self._steps.pop(r.id, None)
        self._done += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1)
        elif self._enabled and r.outcome != "in-sync":
            detail = f": {r.detail}" if r.detail else ""
            note(f"[{self._done}/{self._total}] {r.alias or r.id} {r.outcome}{detail}")

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
