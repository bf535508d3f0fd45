"""A pull request to the config repo cannot make clmgit run code: a source repository committed
inside the config repo's working tree is refused, a source's own hooks never run, `repo:` is a
URL of an allowed scheme or a path (never an option, never `ext::`), and a source's name is
`[a-z0-9-]+` as a whole. Everything through the real CLI on real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest
from clmgit_sandbox.configrepo import cluster_record

from clmgit.adapters.git import run_git
from tests.helpers.cli import run_cli
from tests.helpers.sources import two_sources

MAIN_TREE = {"cluster/stack.yaml": "Resources: {}\n"}
ADDONS_TREE = {"cluster/manifests/app/cm.yaml": "kind: ConfigMap\n"}
RECORDS = [cluster_record("aws:1:eu-central-1:beta-1", channel="beta")]
SOURCES = "sources:\n  - name: main\n  - name: addons\n"


def _arm_hooks(repo: Path, marker: Path) -> None:
    """Hooks that leave `marker` behind if git runs them, named by the repository's config."""
    hooks = repo / "hooks-of-the-pr"
    hooks.mkdir()
    for name in ("reference-transaction", "pre-push", "post-checkout", "post-index-change"):
        script = hooks / name
        script.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        script.chmod(0o755)
    run_git(["config", "core.hooksPath", str(hooks)], cwd=repo)


def test_a_source_repository_committed_inside_the_config_repo_is_refused(tmp_path) -> None:
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=RECORDS)
    marker = tmp_path / "hook-ran"
    # The pull request's payload: a bare repository with its own config and hooks.
    evil = repos.main.path / "vendor" / "addons.git"
    run_git(["clone", "--quiet", "--bare", "--", str(repos.addons.path), str(evil)],
            cwd=tmp_path)
    _arm_hooks(evil, marker)
    repos.main.git("add", "vendor")
    repos.main.git("commit", "--quiet", "-m", "Vendor the add-ons")
    repos.main.commit("main", {"clmgit.yaml": f"{SOURCES}    repo: {evil}\n"}, "Use them")

    result = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta", "--force")

    assert result.code == 1, result.out
    assert result.err.strip().endswith(
        "lies inside the config repo's working tree "
        f"({repos.main.path}); name a repository outside it or by URL"), result.err
    assert "Traceback" not in result.err
    assert not marker.exists()


def test_a_file_url_into_the_working_tree_is_refused_too(tmp_path) -> None:
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=RECORDS)
    inside = repos.main.path / "x.git"
    repos.main.commit("main", {"clmgit.yaml": f"{SOURCES}    repo: file://{inside}\n"}, "URL")

    result = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta", "--force")

    assert result.code == 1
    assert "lies inside the config repo's working tree" in result.err


def test_the_hooks_of_a_source_repository_never_run(tmp_path) -> None:
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=RECORDS)
    marker = tmp_path / "hook-ran"
    _arm_hooks(repos.addons.path, marker)
    _arm_hooks(repos.main.path, marker)
    repos.addons.commit("dev", {"cluster/manifests/app/cm.yaml": "kind: Secret\n"}, "v2")

    result = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta", "--force",
                     "--push")

    assert result.code == 0, result.err
    assert repos.sha("addons", "beta") == repos.sha("addons", "dev")
    assert not marker.exists(), marker.read_text()


@pytest.mark.parametrize("repo", [
    "--upload-pack=touch pwned;x",
    "--upload-pack=touch pwned;://x",
    "ext::sh -c touch% pwned",
    "ext://sh -c touch% pwned",
    "http://example.com/plain-http.git",
    "a\nb",
])
def test_a_source_repo_that_is_not_a_url_or_a_path_is_refused(tmp_path, repo: str,
                                                              monkeypatch) -> None:
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=RECORDS)
    quoted = repo.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    repos.main.commit("main", {"clmgit.yaml": f'{SOURCES}    repo: "{quoted}"\n'}, "Bad repo")
    monkeypatch.chdir(tmp_path)

    result = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta", "--force")

    assert result.code == 1, result.out
    assert "source 'addons': repo " in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("name", ["addons\n", "addons\n\n", "Addons", "add ons", "addons/x"])
def test_a_source_name_is_matched_whole(tmp_path, name: str) -> None:
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=RECORDS)
    text = (f"sources:\n  - name: main\n  - name: {name!r}\n"
            f"    repo: {repos.addons.path}\n").replace("'", '"')
    repos.main.commit("main", {"clmgit.yaml": text}, "A name with a newline")

    result = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta", "--force")

    assert result.code == 1, result.out
    assert "needs a name of [a-z0-9-]+" in result.err


def test_every_git_process_runs_hardened(tmp_path) -> None:
    """The settings reach git with the command-scope precedence, over the repository's own."""
    run_git(["init", "--quiet", str(tmp_path / "r")], cwd=tmp_path)
    run_git(["config", "core.hooksPath", "hooks"], cwd=tmp_path / "r")
    run_git(["config", "credential.helper", "store --file=/tmp/stolen"], cwd=tmp_path / "r")
    run_git(["config", "protocol.ext.allow", "always"], cwd=tmp_path / "r")

    def get(key: str, *args: str) -> str:
        out = run_git([*args, "config", "--get-all", key], cwd=tmp_path / "r", ok=(0, 1))
        return out.stdout.decode().splitlines()[-1] if out.stdout else ""

    assert get("core.hooksPath") == "/dev/null"
    assert get("core.fsmonitor") == "false"
    assert get("credential.helper") == ""
    assert get("protocol.ext.allow") == "never"
    assert get("protocol.allow") == "never"
    assert get("protocol.file.allow") == "never"
    proc = run_git(["ls-remote", "--", "ext::sh -c touch% pwned", "HEAD"],
                   cwd=tmp_path / "r", ok=range(256))
    assert proc.returncode != 0
    assert not (tmp_path / "r" / "pwned").exists()
    system = tmp_path / "gitconfig-system"
    system.write_text("[clmgit]\n\tmarker = system\n")
    asked = run_git(["config", "--get", "clmgit.marker"], cwd=tmp_path / "r", ok=(0, 1),
                    env={"GIT_CONFIG_SYSTEM": str(system)})
    assert asked.returncode == 1  # the system-wide file is not read
