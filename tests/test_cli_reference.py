"""The command-line reference (docs/reference/cli.md) is generated from the Typer app
(scripts/cli_reference.py, `make docs-cli`) and must say what the code does: every command,
argument, option, default and environment variable."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference",
                                                  ROOT / "scripts" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _option(command: Any, path: list[str], name: str) -> Any:
    for part in path:
        command = command.commands[part]
    return next(p for p in command.params if p.name == name)


def test_the_reference_page_is_up_to_date(generator: ModuleType) -> None:
    page = ROOT / "docs" / "reference" / "cli.md"
    assert page.read_text() == generator.render(generator.app_command()), \
        "docs/reference/cli.md is stale: run `make docs-cli`"


def test_every_command_and_option_is_in_the_page(generator: ModuleType) -> None:
    text = generator.render(generator.app_command())
    for title in ("`clmgit promote`", "`clmgit reconcile`", "`clmgit registry serve`"):
        assert f"# {title}" in text
    assert "| `--wait-for-leases WAIT_FOR_LEASES` |" in text
    assert "`CLMGIT_TOKEN_FILE`" in text


@pytest.mark.parametrize("change", ["default", "help", "envvar", "new option"])
def test_a_changed_option_makes_the_page_stale(generator: ModuleType, tmp_path: Path,
                                               change: str) -> None:
    page = tmp_path / "cli.md"
    assert generator.main([str(page)]) == 0 and generator.main(["--check", str(page)]) == 0
    command: Any = generator.app_command()
    option = _option(command, ["reconcile"], "concurrency")
    if change == "default":
        option.default = 5
    elif change == "help":
        option.help = "Clusters at once."
    elif change == "envvar":
        option.envvar = "CLMGIT_CONCURRENCY"
    else:
        new = copy.copy(option)
        new.name, new.opts, new.help = "new", ["--new"], "New."
        command.commands["status"].params.append(new)
    assert generator.render(command) != page.read_text()
    page.write_text(generator.render(command))
    assert generator.main(["--check", str(page)]) == 1
