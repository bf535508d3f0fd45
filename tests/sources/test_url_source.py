"""A config source given by URL: mirrored under the cache keyed by the source's name, fetched
by each command; its channel branch moves only with `--push`, on its own remote."""

from __future__ import annotations

from clmgit.adapters.git import run_git
from clmgit.sandbox.configrepo import cluster_record
from tests.conftest import run_cli
from tests.sources.repos import two_sources


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
