"""YAML from a config repo or a registry is read with limits: an alias bomb, an alias loop or an
oversized file is refused in one sentence naming the file, fast and in little memory, by every
command that reads it; files with ordinary anchors and merge keys read as before."""

from __future__ import annotations

import time

import pytest
import yaml
from clmgit_sandbox.configrepo import init_example_repo

from clmgit import yamlsafe
from clmgit.errors import ConfigError
from tests.helpers.cli import run_cli


def alias_bomb(key: str = "clusters", levels: int = 9, width: int = 9) -> str:
    """Under 2 KB that stands for width**levels nodes, under `key`."""
    names = [f"l{i}" for i in range(levels + 1)]
    lines = [f"{names[0]}: &{names[0]} [{', '.join(['lol'] * width)}]"]
    for prev, name in zip(names, names[1:], strict=False):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * width)}]")
    return "\n".join(lines) + f"\n{key}: [*{names[-1]}]\n"


@pytest.fixture
def repo(tmp_path):
    return init_example_repo(tmp_path / "config")


def test_an_alias_bomb_in_the_registry_is_refused_fast(repo) -> None:
    bomb = alias_bomb()
    assert len(bomb) < 2200
    repo.commit("main", {"clusters.yaml": bomb}, "A 2 KB alias bomb")

    for command in (("status",), ("promote", "dev", "beta", "--dry-run", "--force"),
                    ("report", "--markdown")):
        started = time.monotonic()
        result = run_cli("--repo", str(repo.path), *command)
        took = time.monotonic() - started

        assert result.code == 1, (command, result.out, result.err)
        assert "clusters.yaml is refused: its YAML aliases expand to" in result.err, result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
        assert took < 5, took


def test_an_alias_bomb_in_a_channel_file_and_in_clmgit_yaml(repo) -> None:
    bomb = "channel: dev\nbranch: dev\n" + alias_bomb("x")
    repo.commit("main", {"channels/dev.yaml": bomb}, "A bomb in a channel")

    result = run_cli("--repo", str(repo.path), "status")

    assert result.code == 1
    assert "channels/dev.yaml is refused: its YAML aliases expand to" in result.err

    repo.commit("main", {"channels/dev.yaml": "channel: dev\nbranch: dev\n",
                         "clmgit.yaml": alias_bomb("layout")}, "In the settings")
    result = run_cli("--repo", str(repo.path), "status")

    assert result.code == 1
    assert "clmgit.yaml on branch 'main' is refused: its YAML aliases expand to" in result.err


def test_an_alias_loop_is_refused(repo) -> None:
    repo.commit("main", {"clusters.yaml": "clusters: &a\n  - *a\n"}, "A loop")

    result = run_cli("--repo", str(repo.path), "status")

    assert result.code == 1
    assert "clusters.yaml is refused: a YAML alias refers to a node that contains it" in result.err


def test_a_file_over_the_size_cap_is_refused(repo, monkeypatch) -> None:
    monkeypatch.setattr(yamlsafe, "MAX_BYTES", 1000)
    text = "clusters: []\n" + "#" * 2000 + "\n"
    repo.commit("main", {"clusters.yaml": text}, "Large")

    result = run_cli("--repo", str(repo.path), "status")

    assert result.code == 1
    assert f"clusters.yaml is refused: it is {len(text):,} bytes, more than the 1,000" \
        in result.err


def test_too_many_aliases_are_refused() -> None:
    text = "a: &a 1\nb: [" + ", ".join(["*a"] * (yamlsafe.MAX_ALIASES + 1)) + "]\n"

    with pytest.raises(ConfigError, match=r"^f.yaml is refused: it uses more than"):
        yamlsafe.load(text, "f.yaml", yaml.SafeLoader)


def test_anchors_merge_keys_and_stars_in_strings_read_as_before() -> None:
    text = ("base: &base {size: 3, zone: a}\n"
            "pools:\n  - {<<: *base, name: one}\n  - *base\n"
            "selector: {alias: '*-canary'}\nglob: a*b\n")

    assert yamlsafe.load(text, "f.yaml", yaml.CSafeLoader) == yaml.safe_load(text)
    assert not yamlsafe.may_alias("selector: {alias: '*-canary'}\nglob: a*b\n")
