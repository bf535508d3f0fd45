"""Config sources with remotes: one given by URL is mirrored under the cache keyed by the
source's name, fetched by each command, its channel branch moved only with `--push`, on its own
remote; a source branch that moved on its remote since the plan stops the push before anything
is pushed anywhere."""

from __future__ import annotations

from clmgit_sandbox.configrepo import cluster_record

from clmgit.adapters.git import run_git
from tests.helpers.cli import run_cli
from tests.helpers.sources import two_sources


def _origin_sha(origin, ref: str) -> str:
    return run_git(["rev-parse", ref], cwd=origin).stdout.decode().strip()


def test_a_url_source_is_mirrored_and_moved_by_push(tmp_path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(cache))
    repos = two_sources(
        tmp_path, main_tree={"cluster/stack.yaml": "Resources: {}\n"},
        addons_tree={"cluster/manifests/app/cm.yaml": "kind: ConfigMap\n"},
        records=[cluster_record("aws:1:eu-central-1:beta-1", channel="beta")])
    url = f"file://{repos.addons_origin}"
    repos.main.commit("main", {"clmgit.yaml": "sources:\n  - name: main\n  - name: addons\n"
                               f"    repo: {url}\n"}, "The add-on source by URL")
    repos.main.git("push", "--quiet", "origin", "main")
    # A change that exists only on the remote: the mirror must fetch it.
    addons = repos.addons.commit("dev", {"cluster/manifests/app/cm.yaml": "kind: Secret\n"},
                                 "Addons v2")
    repos.addons.git("push", "--quiet", "origin", "dev")
    cli = ("--repo", str(repos.main.path))

    dry = run_cli(*cli, "promote", "dev", "beta", "--force", "--dry-run")
    pushed = run_cli(*cli, "promote", "dev", "beta", "--force", "--push")

    assert dry.code == 0, dry.err
    assert f"addons={addons[:7]}" in dry.out
    assert [p.name.split("-")[0] for p in (cache / "sources").iterdir()] == ["addons"]
    assert pushed.code == 0, pushed.err
    assert "move branch beta of source addons: " in pushed.out
    assert _origin_sha(repos.addons_origin, "beta") == addons
    assert _origin_sha(repos.main_origin, "beta") == repos.sha("main", "dev")


def test_a_source_branch_moved_on_its_remote_pushes_nothing(tmp_path, monkeypatch) -> None:
    repos = two_sources(
        tmp_path, main_tree={"cluster/stack.yaml": "Resources: {}\n"},
        addons_tree={"cluster/manifests/app/cm.yaml": "kind: ConfigMap\n"},
        records=[cluster_record("aws:1:eu-central-1:beta-1", channel="beta")])
    repos.addons.commit("dev", {"cluster/manifests/app/cm.yaml": "kind: Secret\n"}, "v2")
    # Someone else moved the add-on source's beta on its remote since this clone saw it.
    other = repos.addons.commit("elsewhere", {"x": "y\n"}, "Elsewhere")
    repos.addons.git("push", "--quiet", "--force", "origin", f"{other}:refs/heads/beta")
    control = _origin_sha(repos.main_origin, "main")

    result = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta", "--force",
                     "--push")

    assert result.code == 1
    assert "branch 'beta' of config source 'addons' is at" in result.err
    assert _origin_sha(repos.main_origin, "main") == control
    assert _origin_sha(repos.addons_origin, "beta") == other
