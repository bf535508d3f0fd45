"""`clmgit.convert.run`, the conversion the `convert` command calls, without the command line:
it returns what happened (`Outcome`) and prints nothing."""

from __future__ import annotations

from pathlib import Path

from clmgit_sandbox.configrepo import ConfigRepoBuilder

from clmgit.convert.ec2 import Ec2Source
from clmgit.convert.run import Options, convert_refs
from tests.helpers.clm_files import CLM_FILES


def written(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_a_checked_conversion_into_a_directory(tmp_path: Path, capsys) -> None:
    b = ConfigRepoBuilder(tmp_path / "clm")
    b.commit("dev", CLM_FILES, "Add the cluster config")
    out = tmp_path / "out"

    outcome = convert_refs(str(b.path), ["dev"],
                           Options(out=out, check=True, ec2=Ec2Source.offline))

    assert outcome.refusal is None
    [m] = outcome.migrations
    assert m.written and m.out == str(out) and m.onto is None
    assert m.check is not None and m.check.identical and m.check_sample
    assert written(out) == sorted(CLM_FILES)
    assert capsys.readouterr() == ("", "")


def test_a_dry_run_writes_nothing(tmp_path: Path) -> None:
    b = ConfigRepoBuilder(tmp_path / "clm")
    b.commit("dev", CLM_FILES, "Add the cluster config")

    outcome = convert_refs(str(b.path), ["dev"], Options(dry_run=True))

    [m] = outcome.migrations
    assert outcome.refusal is None and not m.written and m.onto == "dev-jinja"
    assert b.git("branch", "--list", "dev-jinja").strip() == ""
