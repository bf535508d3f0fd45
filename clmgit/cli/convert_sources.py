"""`convert --all-sources`: the options of `convert` applied to every config source of
`clmgit.yaml`, each source's conversion written into its own repository (or under
`--out DIR/<source>`), `--check` rendering with the sources' defaults composed
(`clmgit.convert.sources`). All or nothing: a refusal or a difference in any source writes
nothing anywhere."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clmgit.cli.common import Format
from clmgit.errors import RefusedError

if TYPE_CHECKING:
    from clmgit.adapters.git import GitRepo
    from clmgit.convert.migrate import Migration
    from clmgit.workspace import Workspace


def convert_sources(ws: Workspace, *, refs: list[str], onto: str | None, out: Path | None,
                    check: bool, registry: str | None, ec2: Any, allow_uncovered: bool,
                    dry_run: bool, fmt: Format) -> None:
    from clmgit.cli.convert import _report, _write, refusal
    from clmgit.convert import migrate

    per_source: list[tuple[GitRepo, list[Migration]]] = []
    for s in ws.sources.sources:
        repo = ws.source_repos.repo(s.name)
        if ws.source_repos.url(s.name) is not None and out is None and not dry_run:
            raise RefusedError(f"config source {s.name!r} is a URL, whose mirror keeps no "
                               "branch of its own: pass --out DIR (or --dry-run)")
        migrations = _convert(repo, refs, main=s is ws.sources.main)
        for m, ref in zip(migrations, refs, strict=True):
            if out is None:
                m.onto = onto or migrate.branch_for(ref)
            else:
                m.out = str(out / s.name / ref) if len(refs) > 1 else str(out / s.name)
            m.source = dataclasses.replace(m.source, label=f"{s.name} {ref}")
        if out is None:
            migrate.refuse_existing(repo, [m.onto for m in migrations if m.onto])
        per_source.append((repo, migrations))
    if check:
        _check(per_source, refs, registry, ec2)
    everything = [m for _, ms in per_source for m in ms]
    if not dry_run and all(m.check is None or m.check.passes(allow_uncovered=allow_uncovered)
                           for m in everything):
        for repo, migrations in per_source:
            _write(None if out is not None else repo, migrations)
    refused = refusal(everything, allow_uncovered=allow_uncovered)
    _report(everything, fmt, dry_run=dry_run, refusal=refused)
    if refused:
        raise RefusedError(refused)


def _convert(repo: GitRepo, refs: list[str], *, main: bool) -> list[Migration]:
    from clmgit.cli.convert import _convert_all
    from clmgit.convert import migrate

    return _convert_all([migrate.read_source(repo.location, ref, main=main) for ref in refs])


def _check(per_source: list[tuple[GitRepo, list[Migration]]], refs: list[str],
           registry: str | None, ec2: Any) -> None:
    """Each ref's conversions, source by source, checked with the composed items."""
    from clmgit.convert import migrate
    from clmgit.convert.clmdata import describe_sample, sample_clusters, tree_profiles
    from clmgit.convert.sources import composed_clusters

    listed = None
    if registry:
        from clmgit.registry import open_registry

        listed = open_registry(registry, default_dir=None).clusters()
    for index, ref in enumerate(refs):
        at_ref = [ms[index] for _, ms in per_source]
        main = at_ref[0]
        clusters = listed if listed is not None else sample_clusters(
            ref, tree_profiles(main.conversion.files))
        composed = composed_clusters(at_ref, clusters, ec2=ec2)
        for m in at_ref:
            m.check_sample = None if listed is not None else describe_sample(clusters)
            m.check = migrate.check(m.source, m.conversion, composed, ec2=ec2)
