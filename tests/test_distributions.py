"""The two distributions of this repository: clmgit, and clmgit-sandbox (sandbox/).

`pip install .` is what a production install gets: the wheel built here holds no sandbox and
names no test-only dependency, and nothing it pulls in transitively does either.
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Distributions only the sandbox, the demo and the tests need.
SANDBOX_ONLY = {"moto", "kubernetes-validate", "cfn-lint", "selenium", "clmgit-sandbox"}
#: Distributions only `clmgit registry serve` needs (`pip install 'clmgit[server]'`).
SERVER_ONLY = {"fastapi", "pydantic", "uvicorn", "psycopg"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str | None:
    """The distribution a Requires-Dist line names; None for one behind an extra."""
    if "extra ==" in requirement:
        return None
    return canonical(re.split(r"[\s\[<>=!~;(]", requirement.strip(), maxsplit=1)[0])


def closure(names: set[str]) -> set[str]:
    """Every distribution `names` pull in, read from the installed metadata."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        todo.extend(n for n in map(requirement_name, requires) if n)
    return seen


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """clmgit's wheel, built from a copy of the sources as `pip install .` builds it."""
    source = tmp_path_factory.mktemp("source")
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copy(ROOT / "README.md", source)
    shutil.copytree(ROOT / "clmgit", source / "clmgit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "sandbox", source / "sandbox",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--wheel-dir", str(out), str(source)],
                   check=True, capture_output=True)
    (built,) = out.glob("clmgit-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_clmgit_and_no_sandbox(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert "clmgit" in tops
    assert not [t for t in tops if t not in ("clmgit",) and not t.endswith(".dist-info")]
    assert "clmgit/report/templates/report.html.j2" in wheel.namelist()


def test_the_wheel_requires_nothing_the_sandbox_needs(wheel: zipfile.ZipFile) -> None:
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    lines = wheel.read(metadata).decode().splitlines()
    required = {requirement_name(line.removeprefix("Requires-Dist: "))
                for line in lines if line.startswith("Requires-Dist: ")} - {None}
    assert "boto3" in required and "typer" in required
    assert not required & SANDBOX_ONLY
    # The registry server's stack is the `server` extra: a CI runner installs none of it.
    assert not required & SERVER_ONLY
    server = {canonical(re.split(r"[\s\[<>=!~;(]", line.removeprefix("Requires-Dist: "))[0])
              for line in lines
              if line.startswith("Requires-Dist: ") and 'extra == "server"' in line}
    assert server == SERVER_ONLY
    assert not closure({r for r in required if r}) & SANDBOX_ONLY


def test_the_sandbox_distribution_carries_the_test_world() -> None:
    project = tomllib.loads((ROOT / "sandbox" / "pyproject.toml").read_text())["project"]
    required = {requirement_name(r) for r in project["dependencies"]}
    assert {"clmgit", "moto", "kubernetes-validate"} <= required
    assert (ROOT / "sandbox" / "clmgit_sandbox" / "kubeapi" / "protofields.json").is_file()
