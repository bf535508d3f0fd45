"""`clmgit convert` without its options and output: the conversions of some refs of one
repository (`convert_refs`) or of every config source of `clmgit.yaml` (`convert_sources`),
optionally checked, written unless refused. All or nothing: a refusal or a difference anywhere
writes nothing anywhere. Each returns the `Outcome` the CLI reports."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clmgit.adapters.git import GitRepo
from clmgit.convert import migrate
from clmgit.convert.ec2 import Ec2Source, ec2_answers
from clmgit.convert.migrate import Migration, Source
from clmgit.errors import RefusedError

if TYPE_CHECKING:
    from clmgit.accounts import Ec2Info
    from clmgit.model import Cluster
    from clmgit.workspace import Workspace


@dataclass(frozen=True)
class Outcome:
    migrations: list[Migration]
    refusal: str | None  # why the check refuses (then nothing was written), or None


@dataclass(frozen=True)
class Options:
    """What every conversion is asked: where to write (`onto` a branch, else `out`), and how
    to check (`registry` None: sample clusters)."""

    onto: str | None = None
    out: Path | None = None
    check: bool = False
    registry: str | None = None
    ec2: Ec2Source = Ec2Source.auto
    allow_uncovered: bool = False
    dry_run: bool = False


def convert_refs(repo_path: str, refs: Sequence[str], options: Options) -> Outcome:
    """`refs` of the repository at `repo_path` (a ref, or a directory holding cluster/), each
    onto `options.onto` or `<ref>-jinja`, or into `out` (`out/<ref>` for several refs)."""
    migrations = convert_all([migrate.read_source(repo_path, ref) for ref in refs])
    repo = None
    if options.out is None:
        repo = GitRepo(repo_path)
        for m in migrations:
            if m.source.sha is None and options.onto is None:
                raise RefusedError(f"{m.source.label} is a directory: pass --out DIR, or --onto "
                                   "BRANCH to commit it on top of the repo's HEAD")
            m.onto = options.onto or migrate.branch_for(m.source.label)
        migrate.refuse_existing(repo, [m.onto for m in migrations if m.onto])
    else:
        for m in migrations:
            m.out = str(options.out / m.source.label) if len(refs) > 1 else str(options.out)
    if options.check:
        _check_each(migrations, options)
    why = refusal(migrations, allow_uncovered=options.allow_uncovered)
    if why is None and not options.dry_run:
        write(repo, migrations)
    return Outcome(migrations, why)


def convert_sources(ws: Workspace, refs: Sequence[str], options: Options) -> Outcome:
    """`refs` in every config source of `clmgit.yaml`, each source's conversion written into
    its own repository (or under `out/<source>`), checked with the sources' defaults composed
    (`clmgit.convert.sources`)."""
    out = options.out
    per_source: list[tuple[GitRepo, list[Migration]]] = []
    for s in ws.sources.sources:
        repo = ws.source_repos.repo(s.name)
        if ws.source_repos.url(s.name) is not None and out is None and not options.dry_run:
            raise RefusedError(f"config source {s.name!r} is a URL, whose mirror keeps no "
                               "branch of its own: pass --out DIR (or --dry-run)")
        main = s is ws.sources.main
        migrations = convert_all([migrate.read_source(repo.location, ref, main=main)
                                  for ref in refs])
        for m, ref in zip(migrations, refs, strict=True):
            if out is None:
                m.onto = options.onto or migrate.branch_for(ref)
            else:
                m.out = str(out / s.name / ref) if len(refs) > 1 else str(out / s.name)
            m.source = dataclasses.replace(m.source, label=f"{s.name} {ref}")
        if out is None:
            migrate.refuse_existing(repo, [m.onto for m in migrations if m.onto])
        per_source.append((repo, migrations))
    if options.check:
        _check_composed(per_source, refs, options)
    everything = [m for _, ms in per_source for m in ms]
    why = refusal(everything, allow_uncovered=options.allow_uncovered)
    if why is None and not options.dry_run:
        for repo, migrations in per_source:
            write(None if out is not None else repo, migrations)
    return Outcome(everything, why)


def convert_all(sources: list[Source]) -> list[Migration]:
    """Every source converted, or one `RefusedError` naming what each refused."""
    migrations, refused = [], []
    for s in sources:
        try:
            migrations.append(Migration(s, migrate.convert(s)))
        except RefusedError as e:
            refused.append(str(e))
    if refused:
        raise RefusedError(" | ".join(refused))
    return migrations


def refusal(migrations: list[Migration], *, allow_uncovered: bool) -> str | None:
    """Why the check refuses the conversion (differences, or uncovered files), or None."""
    checks = [m.check for m in migrations if m.check is not None]
    if differing := sum(len(c.differences) for c in checks):
        return (f"{differing} rendered file(s) differ between the Go original and the "
                "conversion (first differing lines above); nothing was written")
    if not all(c.passes(allow_uncovered=allow_uncovered) for c in checks):
        count = sum(len(c.uncovered) for c in checks)
        return (f"{count} template(s) rendered nothing but comments for every "
                "cluster checked, so the check proves only the `if` around them "
                "(listed above as uncovered, in --output json under "
                "check.coverage.uncovered); pass --allow-uncovered to accept that; "
                "nothing was written")
    return None


def write(repo: GitRepo | None, migrations: list[Migration]) -> None:
    """Into their directories (`repo` None), else one commit each on its new branch."""
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


def _listed(registry: str | None) -> list[Cluster] | None:
    """The registry's clusters to check with; None: sample clusters."""
    if not registry:
        return None
    from clmgit.registry import open_registry

    return open_registry(registry, default_dir=None).clusters()


def _check_each(migrations: list[Migration], options: Options) -> None:
    from clmgit.convert.clmdata import describe_sample, sample_clusters, tree_profiles

    listed = _listed(options.registry)
    answers = ec2_answers(options.ec2)
    for m in migrations:
        if listed is None:
            clusters = sample_clusters(m.source.label, tree_profiles(m.conversion.files))
            m.check_sample = describe_sample(clusters)
        else:
            clusters = listed
        m.check = migrate.check(m.conversion, clusters, ec2=answers)


def _check_composed(per_source: list[tuple[GitRepo, list[Migration]]], refs: Sequence[str],
                    options: Options) -> None:
    """Each ref's conversions, source by source, checked with the composed items."""
    from clmgit.convert.clmdata import describe_sample, sample_clusters, tree_profiles
    from clmgit.convert.sources import composed_clusters

    listed = _listed(options.registry)
    answers: Ec2Info = ec2_answers(options.ec2)
    for index, ref in enumerate(refs):
        at_ref = [ms[index] for _, ms in per_source]
        main = at_ref[0]
        clusters = listed if listed is not None else sample_clusters(
            ref, tree_profiles(main.conversion.files))
        composed = composed_clusters(at_ref, clusters, ec2=answers)
        for m in at_ref:
            m.check_sample = None if listed is not None else describe_sample(clusters)
            m.check = migrate.check(m.conversion, composed, ec2=answers)
