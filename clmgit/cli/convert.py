"""`convert`: bring a CLM repository's `cluster/` (Go text/template) over to clmgit's Jinja2, as
one commit on a new branch or into a directory, optionally proven to render byte-identically.
Option parsing and output only; the work is in `clmgit.convert.run`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clmgit.cli import output
from clmgit.cli.common import Format, OutputOpt, settings
from clmgit.convert.ec2 import Ec2Source
from clmgit.errors import RefusedError

if TYPE_CHECKING:
    from clmgit.convert.migrate import Migration


def convert(
    ctx: typer.Context,
    source: Annotated[str | None, typer.Option(
        "--from", help="A ref of --repo (branch, tag, SHA) or a directory holding cluster/.")
    ] = None,
    onto: Annotated[str | None, typer.Option(
        help="The new branch to write (default: <ref>-jinja); never an existing one.")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Write the converted cluster/ into this new directory instead of a branch.")
    ] = None,
    check: Annotated[bool, typer.Option(
        "--check", help="Render every cluster both ways; refuse unless byte-identical.")
    ] = False,
    all_channels: Annotated[bool, typer.Option(
        "--all-channels", help="Convert dev, alpha, beta and stable, each onto <channel>-jinja.")
    ] = False,
    registry: Annotated[str | None, typer.Option(
        "--registry", help="Clusters to --check (a clusters.yaml or URL); default: samples.")
    ] = None,
    all_sources: Annotated[bool, typer.Option(
        "--all-sources", help="Convert the ref in every config source of clmgit.yaml, onto "
        "<ref>-jinja in each; --check renders with the sources' defaults composed.")
    ] = False,
    allow_uncovered: Annotated[bool, typer.Option(
        "--allow-uncovered", help="Let --check pass when templates rendered only comments.")
    ] = False,
    ec2: Annotated[Ec2Source, typer.Option(
        help="EC2 answers for --check: aws, offline (a stand-in), auto (aws if configured).")
    ] = Ec2Source.auto,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Convert and check; write nothing.")
                       ] = False,
    fmt: OutputOpt = Format.table,
) -> None:
    """Convert a CLM repository's cluster/ from Go templates to clmgit's Jinja2."""
    from clmgit.convert import run
    from clmgit.convert.migrate import ALL_CHANNELS

    opts = settings(ctx)
    if all_channels == (source is not None):
        raise typer.BadParameter("pass either --from REF_OR_DIR or --all-channels",
                                 param_hint="'--from'")
    if onto is not None and out is not None:
        raise typer.BadParameter("pass either --onto BRANCH or --out DIR, not both",
                                 param_hint="'--onto'")
    if all_channels and onto is not None:
        raise typer.BadParameter("--all-channels writes each channel onto <channel>-jinja; "
                                 "drop --onto (or convert one channel with --from)",
                                 param_hint="'--onto'")
    refs = list(ALL_CHANNELS) if all_channels else [source or ""]
    options = run.Options(onto=onto, out=out, check=check, registry=registry or opts.registry,
                          ec2=ec2, allow_uncovered=allow_uncovered, dry_run=dry_run)
    outcome = (run.convert_sources(opts.ws, refs, options) if all_sources else
               run.convert_refs(opts.repo, refs, options))
    _report(outcome.migrations, fmt, dry_run=dry_run, refusal=outcome.refusal)
    if outcome.refusal:
        raise RefusedError(outcome.refusal)


def _report(migrations: list[Migration], fmt: Format, *, dry_run: bool,
            refusal: str | None) -> None:
    if fmt is not Format.table:
        output.emit([m.summary() for m in migrations], fmt, kind="ConversionList",
                    dry_run=dry_run, errors=[{"message": refusal, "exit_code": 1}] if refusal
                    else [])
        return
    for m in migrations:
        s = m.summary()
        where = f"branch {m.onto}" if m.onto else f"directory {m.out}"
        made = (f" ({m.commit[:7]})" if m.commit and m.written else "" if m.written
                else " (dry run: not written)" if dry_run else " (not written)")
        sha = f" ({m.source.sha[:7]})" if m.source.sha else ""
        output.line(f"{m.source.label}{sha} → {where}{made}: "
                    f"{s['files_converted']} files converted")
        output.line("  constructs: " + _counts(s["constructs"]))
        output.line("  functions: " + _counts(s["functions"]))
        if m.check is None:
            continue
        _report_check(m)


def _report_check(m: Migration) -> None:
    check = m.check
    assert check is not None
    who = m.check_sample or (f"{len(check.clusters) - len(check.variants)} clusters of the "
                             "registry")
    verdict = "all byte-identical" if check.identical else f"{len(check.differences)} differ"
    output.line(f"  check: {who}, and {len(check.variants)} variant(s) made to reach every "
                f"template and compared value ({', '.join(check.variants)}): {check.renders} "
                f"files rendered both ways, {verdict}")
    reached = len(check.files) - len(check.uncovered)
    output.line(f"  coverage: {reached} of {len(check.files)} templates rendered content "
                f"({100 * check.coverage:.1f} %)" + (", uncovered:" if check.uncovered else ""))
    for path in check.uncovered:
        output.line(f"    {path}")
    if check.left_out:
        output.line("  settings no variant has, CLM's original fails with them: "
                    + ", ".join(check.left_out))
    for d in check.differences:
            output.line(f"  {d.cluster} {d.path}:")
            output.line("    " + d.detail.rstrip("\n").replace("\n", "\n    "))


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


COMMANDS = {"convert": convert}
