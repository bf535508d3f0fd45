"""The manual's table of template variables (docs/reference/templates.md) against a real render
of the example config repo: every name the table gives exists in a template's context, and every
name a template's context has at the top is in the table."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from clmgit_sandbox.configrepo import GIT_ENV
from clmgit_sandbox.configtree import EXAMPLE_REPO

from clmgit.config.templates import TemplateSet
from tests.helpers.cli import run_cli

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "templates.md"
HEADING = "## Template variables of the default layout"


def table_names() -> list[str]:
    """The names in the first column of the manual's table, `a`, `b` split into two."""
    section = PAGE.read_text().split(HEADING, 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [name for row in rows for name in re.findall(r"`([^`]+)`", row.split("|")[1])]


def contexts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """(path, variables) of every template `clmgit render` renders for an example cluster."""
    seen: list[tuple[str, dict[str, Any]]] = []
    real = TemplateSet.render

    def spy(self: TemplateSet, path: str, variables: Mapping[str, Any], **kw: Any) -> str:
        seen.append((path, dict(variables)))
        return real(self, path, variables, **kw)

    monkeypatch.setattr(TemplateSet, "render", spy)
    repo = tmp_path / "config"
    subprocess.run([str(EXAMPLE_REPO / "init.sh"), str(repo)], env={**os.environ, **GIT_ENV},
                   check=True, capture_output=True)
    result = run_cli("--repo", str(repo), "render", "--cluster", "dev-1",
                     "--out", str(tmp_path / "out"))
    assert result.code == 0, result.err
    return seen


def resolves(name: str, variables: Mapping[str, Any]) -> bool:
    value: Any = variables
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False
        value = value[part]
    return True


def test_every_variable_in_the_table_is_in_a_render_context(tmp_path, monkeypatch) -> None:
    seen = contexts(tmp_path, monkeypatch)
    names = table_names()
    assert "cluster.local_id" in names and "values.stack_outputs" in names  # the table is read
    missing = [n for n in names if not any(resolves(n, variables) for _, variables in seen)]
    assert missing == []


def test_every_top_level_name_of_a_context_is_in_the_table(tmp_path, monkeypatch) -> None:
    seen = contexts(tmp_path, monkeypatch)
    paths = {path for path, _ in seen}
    assert {"cluster/config-defaults.yaml", "cluster/stack.yaml",
            "cluster/node-pools/worker-default/stack.yaml"} <= paths
    top = {name for _, variables in seen for name in variables}
    assert top - set(table_names()) == set()
