"""`convert`: bring a CLM repository's `cluster/` (Go text/template) over to clmgit's Jinja2, as
one commit on a new branch or into a directory, optionally proven to render byte-identically.
Option parsing and output only; the work is in `clmgit.convert.migrate`."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from clmgit import output
from clmgit.cli.common import Format, OutputOpt, settings
from clmgit.errors import RefusedError

if TYPE_CHECKING:
    from clmgit.convert.migrate import Migration, Source
    from clmgit.model import Cluster


class Ec2Source(StrEnum):
    auto = "auto"
    aws = "aws"
    offline = "offline"


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
    from clmgit.adapters.git import GitRepo
    from clmgit.convert import migrate

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
    refs = list(migrate.ALL_CHANNELS) if all_channels else [source or ""]
    if all_sources:
        from clmgit.cli.convert_sources import convert_sources

        convert_sources(opts.ws, refs=refs, onto=onto, out=out, check=check,
                        registry=registry or opts.registry, ec2=_ec2(ec2) if check else None,
                        allow_uncovered=allow_uncovered, dry_run=dry_run, fmt=fmt)
        return
    sources = [migrate.read_source(opts.repo, ref) for ref in refs]
    migrations = _convert_all(sources)
    repo = None
    if out is None:
        repo = GitRepo(opts.repo)
        for m in migrations:
            if m.source.sha is None and onto is None:
                raise RefusedError(f"{m.source.label} is a directory: pass --out DIR, or --onto "
                                   "BRANCH to commit it on top of the repo's HEAD")
            m.onto = onto or migrate.branch_for(m.source.label)
        migrate.refuse_existing(repo, [m.onto for m in migrations if m.onto])
    else:
        for m in migrations:
            m.out = str(out / m.source.label) if all_channels else str(out)
    if check:
        _check_all(migrations, registry or opts.registry, ec2)
    passed = all(m.check is None or m.check.passes(allow_uncovered=allow_uncovered)
                 for m in migrations)
    if passed and not dry_run:
        _write(repo, migrations)
    refused = refusal(migrations, allow_uncovered=allow_uncovered)
    _report(migrations, fmt, dry_run=dry_run, refusal=refused)
    if refused:
        raise RefusedError(refused)


def refusal(migrations: list[Migration], *, allow_uncovered: bool) -> str | None:
    """Why the check refuses the conversion (differences, or uncovered files), or None."""
    passed = all(m.check is None or m.check.passes(allow_uncovered=allow_uncovered)
                 for m in migrations)
    checks = [m.check for m in migrations if m.check is not None]
    if differing := sum(len(c.differences) for c in checks):
        return (f"{differing} rendered file(s) differ between the Go original and the "
                "conversion (first differing lines above); nothing was written")
    if not passed:
        count = sum(len(c.uncovered) for c in checks)
        return (f"{count} template(s) rendered nothing but comments for every "
                "cluster checked, so the check proves only the `if` around them "
                "(listed above as uncovered, in --output json under "
                "check.coverage.uncovered); pass --allow-uncovered to accept that; "
                "nothing was written")
    return None


def _convert_all(sources: list[Source]) -> list[Migration]:
    from clmgit.convert import migrate

    migrations, refused = [], []
    for s in sources:
        try:
            migrations.append(migrate.Migration(s, migrate.convert(s)))
        except RefusedError as e:
            refused.append(str(e))
    if refused:
        raise RefusedError(" | ".join(refused))
    return migrations


def _check_all(migrations: list[Migration], registry: str | None, ec2: Ec2Source) -> None:
    from clmgit.convert import migrate
    from clmgit.convert.clmdata import describe_sample, sample_clusters, tree_profiles

    listed: list[Cluster] | None = None
    if registry:
        from clmgit.registry import open_registry

        listed = open_registry(registry, default_dir=None).clusters()
    answers = _ec2(ec2)
    for m in migrations:
        if listed is None:
            clusters = sample_clusters(m.source.label, tree_profiles(m.conversion.files))
            m.check_sample = describe_sample(clusters)
        else:
            clusters = listed
        m.check = migrate.check(m.source, m.conversion, clusters, ec2=answers)


def _ec2(choice: Ec2Source) -> Any:
    """The EC2 answers both renderings get: AWS's (credentials and region from boto3's chain)
    or the offline stand-in."""
    import boto3

    from clmgit.adapters.aws.ec2info import Ec2Info
    from clmgit.config.offline import OfflineEc2

    if choice is Ec2Source.offline:
        return OfflineEc2()
    session = boto3.Session()
    configured = session.get_credentials() is not None and session.region_name
    if choice is Ec2Source.aws or configured:
        return Ec2Info(session)
    return OfflineEc2()


def _write(repo: Any, migrations: list[Migration]) -> None:
    from clmgit.convert import migrate

    if repo is None:
        for m in migrations:
            migrate.write_directory(Path(m.out or ""), m.conversion)
            m.written = True
        return
    commits = {}
    for m in migrations:
        parent = m.source.sha or repo.rev("HEAD")
        if parent is None:
            raise RefusedError(f"{repo.location} has no commit at HEAD to put the conversion on")
        m.commit = migrate.commit_conversion(repo, m, parent=parent)
        commits[m.onto or ""] = m.commit
    migrate.create_branches(repo, commits)
    for m in migrations:
        m.written = True


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
