"""The other commands with two config sources (real repositories, bare origins): rollback of
both pins in one commit, `diff` per source, `sync-branches` per source, `render` of the composed
tree, `status` comparing CLM's version strings."""

from __future__ import annotations

import json

import yaml
from clmgit_sandbox.configrepo import cluster_record

from clmgit.model import desired_version, parse_cluster
from tests.helpers.cli import run_cli
from tests.helpers.sources import TwoSources, two_sources

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default}}\n"
MAIN_TREE = {"cluster/stack.yaml": "Resources: {}\n",
             "cluster/node-pools/worker-default/stack.yaml": "Resources: {}\n",
             "cluster/manifests/app/cm.yaml": CM.format(name="main-app")}
ADDONS_TREE = {"cluster/manifests/app/cm.yaml": CM.format(name="addon-v1")}


def _repos(tmp_path) -> TwoSources:
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=[])
    repos.set_clusters([
        cluster_record("aws:1:eu-central-1:dev-1", channel="dev"),
        cluster_record("aws:1:eu-central-1:beta-1", channel="beta"),
    ])
    return repos


def _cli(repos: TwoSources, *args: str):
    return run_cli("--repo", str(repos.main.path), *args)


def _pins(repos: TwoSources) -> list[object]:
    text = (repos.main.path / "channels/beta.yaml").read_text()
    return [g.get("sha") for g in yaml.safe_load(text)["groups"]]


def _advance(repos: TwoSources, n: int) -> tuple[str, str]:
    main = repos.main.commit("dev", {"cluster/stack.yaml": f"Resources: {{}}\n# v{n}\n"},
                             f"Main v{n}")
    addons = repos.addons.commit("dev", {"cluster/manifests/app/cm.yaml":
                                         CM.format(name=f"addon-v{n}")}, f"Addons v{n}")
    return main, addons


def test_rollback_moves_both_sources_back_in_one_commit(tmp_path) -> None:
    repos = _repos(tmp_path)
    first = (repos.sha("main", "dev"), repos.sha("addons", "dev"))
    assert _cli(repos, "promote", "dev", "beta", "--force").code == 0
    second = _advance(repos, 2)
    assert _cli(repos, "promote", "dev", "beta", "--force").code == 0
    assert _pins(repos) == [{"main": second[0], "addons": second[1]}] * 2
    before = repos.main.git("rev-list", "--count", "main")

    result = _cli(repos, "rollback", "beta")

    assert result.code == 0, result.err
    assert int(repos.main.git("rev-list", "--count", "main")) == int(before) + 1
    assert _pins(repos) == [{"main": first[0], "addons": first[1]}] * 2
    subject = repos.main.git("log", "-1", "--format=%s", "main")
    assert subject == (f"rollback(beta): main {second[0][:7]}..{first[0][:7]}, "
                       f"addons {second[1][:7]}..{first[1][:7]} [canary,default]")
    # Each source's branch gets the old content without rewriting history (a promotion merge).
    for builder, sha in ((repos.main, first[0]), (repos.addons, first[1])):
        tree = builder.git("rev-parse", f"{sha}^{{tree}}")
        assert builder.git("rev-parse", "beta^{tree}") == tree
        assert builder.git("merge-base", "--is-ancestor", second[builder is repos.addons],
                           "beta") == ""


def test_rollback_to_one_source_keeps_the_other(tmp_path) -> None:
    repos = _repos(tmp_path)
    first_addons = repos.sha("addons", "dev")
    _advance(repos, 2)
    assert _cli(repos, "promote", "dev", "beta", "--force").code == 0
    main = repos.sha("main", "dev")

    result = _cli(repos, "rollback", "beta", "--group", "default",
                  "--to", f"addons={first_addons}")
    forward = _cli(repos, "rollback", "beta", "--to", f"addons={repos.sha('addons', 'dev')}",
                   "--to", f"main={repos.sha('main', 'dev~1')}")

    assert result.code == 0, result.err
    assert _pins(repos) == [{"main": main, "addons": repos.sha("addons", "dev")},
                            {"main": main, "addons": first_addons}]
    assert forward.code == 1
    assert "source 'addons'" in forward.err and "moving forward is `clmgit promote`" in forward.err


def test_diff_lists_each_sources_commits_and_the_composed_render(tmp_path) -> None:
    repos = _repos(tmp_path)
    assert _cli(repos, "promote", "dev", "beta", "--force").code == 0
    _advance(repos, 2)

    result = _cli(repos, "diff", "dev", "beta", "--group", "default")

    assert result.code == 0, result.err
    assert "main: Main v2" in result.out
    assert "addons: Addons v2" in result.out
    assert "-  name: addon-v1" in result.out and "+  name: addon-v2" in result.out



def test_diff_takes_a_sha_per_source_as_the_preview_workflow_passes_them(tmp_path) -> None:
    """A moved map pin is previewed with `--sha SOURCE=SHA` once per source (as
    .github/workflows/preview.yml passes it); a bare SHA is refused with several sources."""
    repos = _repos(tmp_path)
    assert _cli(repos, "promote", "dev", "beta", "--force").code == 0
    main2, addons2 = _advance(repos, 2)
    _advance(repos, 3)

    result = _cli(repos, "diff", "dev", "beta", "--group", "default",
                  "--sha", f"main={main2}", "--sha", f"addons={addons2}")
    bare = _cli(repos, "diff", "dev", "beta", "--sha", main2)

    assert result.code == 0, result.err
    assert "main: Main v2" in result.out and "addons: Addons v2" in result.out
    assert "Main v3" not in result.out and "+  name: addon-v2" in result.out
    assert bare.code == 1 and "name the source, as source=sha" in bare.err

def test_sync_branches_moves_every_sources_branch(tmp_path) -> None:
    repos = _repos(tmp_path)
    assert _cli(repos, "promote", "dev", "beta", "--force").code == 0
    addons = repos.sha("addons", "beta")
    repos.addons.git("update-ref", "refs/heads/beta", repos.sha("addons", "beta~1"))

    dry = _cli(repos, "sync-branches", "--dry-run")
    result = _cli(repos, "sync-branches")

    assert dry.code == 0, dry.err
    assert "would move addons beta:" in dry.out
    assert result.code == 0, result.err
    assert repos.sha("addons", "beta") == addons
    assert _cli(repos, "sync-branches").out == "every channel branch is where its pins are\n"


def test_render_composes_the_sources(tmp_path) -> None:
    repos = _repos(tmp_path)
    out = tmp_path / "out"

    result = _cli(repos, "render", "--cluster", "dev-1", "--out", str(out))

    assert result.code == 0, result.err
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yaml"))
    assert any("main/app" in f or "main-app" in f for f in files), files
    texts = "".join(p.read_text() for p in out.rglob("*.yaml"))
    assert "name: main-app" in texts and "name: addon-v1" in texts


def test_status_compares_clms_version_strings(tmp_path) -> None:
    repos = _repos(tmp_path)
    main, addons = repos.sha("main", "dev"), repos.sha("addons", "dev")
    old_addons = repos.sha("addons", "dev~1")
    records = [cluster_record(f"aws:1:eu-central-1:dev-{n}", channel="dev") for n in (1, 2)]
    for record, at in zip(records, (addons, old_addons), strict=True):
        version = desired_version(f"main={main};addons={at}", parse_cluster(record, "r"))
        record["status"] = {"current_version": version}
    repos.set_clusters(records)

    result = _cli(repos, "status", "--channel", "dev", "--output", "json")

    assert result.code == 0, result.err
    rows = json.loads(result.out)["items"]
    assert [r["pinned_sha"] for r in rows] == [f"main={main};addons={addons}"] * 2
    assert [r["state"] for r in rows] == ["in-sync", "pending"]



def test_versions_of_several_sources_are_shortened_per_source(tmp_path) -> None:
    """`main=af3a9d4;addons=e481e39` in the status table and the Markdown report, never the
    first characters of the whole string (`main=af`)."""
    repos = _repos(tmp_path)
    main, addons = repos.sha("main", "dev"), repos.sha("addons", "dev")
    old_addons = repos.sha("addons", "dev~1")
    record = cluster_record("aws:1:eu-central-1:dev-1", channel="dev")
    version = desired_version(f"main={main};addons={old_addons}", parse_cluster(record, "r"))
    record["status"] = {"current_version": version}
    repos.set_clusters([record])
    short = f"main={main[:7]};addons={addons[:7]}"
    applied = f"main={main[:7]};addons={old_addons[:7]}"

    status = _cli(repos, "status")
    report = _cli(repos, "report", "--markdown")

    assert status.code == 0 and short in status.out and applied in status.out
    assert report.code == 0, report.err
    assert f"| {applied} |" in report.out

def test_render_at_a_commit_of_every_source(tmp_path) -> None:
    repos = _repos(tmp_path)
    old_main = repos.sha("main", "dev")
    _advance(repos, 2)
    addons = repos.sha("addons", "dev")

    result = _cli(repos, "render", "--cluster", "dev-1", "--sha",
                  f"addons={addons[:9]};main={old_main}")
    partial = _cli(repos, "render", "--cluster", "dev-1", "--sha", f"addons={addons}")

    assert result.code == 0, result.err
    assert "name: addon-v2" in result.out and "# v2" not in result.out
    assert partial.code == 1
    assert "name a commit of every source, as main=SHA;addons=SHA" in partial.err
