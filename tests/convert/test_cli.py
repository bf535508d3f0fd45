"""`clmgit convert` through the real command line on a real git repository with a bare origin:
a small CLM repository converts onto a new branch and checks; what cannot be converted, what
renders differently and bad input are refused with exit 1 and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record

from clmgit.adapters.git import GitRepo, run_git
from clmgit.config.source import GitConfigSource
from clmgit.registry.file import clusters_yaml
from tests.helpers.cli import Result, run_cli
from tests.helpers.clm_files import CLM_FILES


@pytest.fixture
def clm_repo(tmp_path: Path) -> ConfigRepoBuilder:
    """A CLM repository: `cluster/` of Go templates on dev (and the other channels), a README,
    a bare origin."""
    b = ConfigRepoBuilder(tmp_path / "clm")
    c1 = b.commit("dev", {**CLM_FILES, "README.md": "docs\n"}, "Add the cluster config")
    for channel in ("alpha", "beta", "stable"):
        b.git("branch", channel, c1)
    b.add_origin()
    return b


def convert(b: ConfigRepoBuilder, *args: str) -> Result:
    return run_cli("--repo", str(b.path), "convert", *args)


def branch_exists(b: ConfigRepoBuilder, name: str) -> bool:
    return run_git(["rev-parse", "--verify", "--quiet", f"refs/heads/{name}"], cwd=b.path,
                   ok=(0, 1)).returncode == 0


def test_converts_onto_a_new_branch_as_one_commit_and_checks(clm_repo: ConfigRepoBuilder) -> None:
    result = convert(clm_repo, "--from", "dev", "--check", "--ec2", "offline")
    assert result.code == 0, result.err
    assert "dev (" in result.out and "→ branch dev-jinja" in result.out
    assert "5 files converted" in result.out
    assert "range 1" in result.out and "define 1" in result.out and "template 1" in result.out
    assert "manifestHash 1" in result.out and "amiID 1" in result.out
    assert "3 sample clusters (environments test, production, e2e; node pools " \
        "pool-worker-default (worker-default), spot (worker-default, spot))" in result.out
    # 3 clusters × (defaults, main stack, 2 manifests, and each of the 2 pools' stack), and
    # the variant with the pools of variant_pools (one of the tree's one profile): 5 more
    assert "1 variant(s) made to reach every template and compared value " \
        "(aws:123456789012:eu-central-1:" \
        "kube-test-v1): 23 files rendered both ways, all byte-identical" in result.out
    assert "coverage: 5 of 5 templates rendered content (100.0 %)\n" in result.out

    dev, converted = clm_repo.sha("dev"), clm_repo.sha("dev-jinja")
    assert clm_repo.git("rev-parse", "dev-jinja^") == dev  # one commit on top of dev
    changed = clm_repo.git("diff", "--name-only", dev, converted).split()
    assert sorted(changed) == sorted(CLM_FILES)  # README.md untouched
    tree = GitConfigSource(GitRepo(clm_repo.path)).files(converted)
    stack = tree["cluster/cluster.yaml"].decode()
    assert "{{ Cluster.ID }}" in stack and ".Cluster" not in stack
    assert "Convert cluster/ of dev" in clm_repo.git("log", "-1", "--format=%B", "dev-jinja")


def test_json_report_and_registry_clusters(clm_repo: ConfigRepoBuilder, tmp_path: Path) -> None:
    registry = tmp_path / "clusters.yaml"
    registry.write_text(clusters_yaml([
        cluster_record("aws:123456789012:eu-central-1:dev-1", channel="dev"),
        cluster_record("aws:123456789012:eu-central-1:prod-1", channel="stable",
                       environment="production", config_items={"efs_id": "fs-1"}),
    ]))
    result = convert(clm_repo, "--from", "dev", "--onto", "jinja", "--check", "--ec2",
                     "offline", "--registry", str(registry), "--output", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)["items"][0]
    assert report["onto"] == "jinja" and report["commit"] == clm_repo.sha("jinja")
    assert report["written"] is True
    assert report["files_converted"] == 5
    assert report["functions"]["manifestHash"] == 1
    check = report["check"]
    assert check["identical"] and check["sample"] is None
    # the registry's clusters, then the variant made from the first
    assert check["clusters"] == ["aws:123456789012:eu-central-1:dev-1",
                                 "aws:123456789012:eu-central-1:prod-1",
                                 "aws:123456789012:eu-central-1:dev-1-v1"]
    assert check["variants"] == [{"cluster": "aws:123456789012:eu-central-1:dev-1-v1",
                                  "sets": {}}]  # every template reached: the pools alone
    assert check["renders"] == 10 + 5
    assert check["coverage"] == {"files": 5, "reached": 5, "percent": 100.0, "uncovered": []}


def test_out_directory_and_dry_run(clm_repo: ConfigRepoBuilder, tmp_path: Path) -> None:
    out = tmp_path / "converted"
    dry = convert(clm_repo, "--from", "dev", "--out", str(out), "--dry-run")
    assert dry.code == 0, dry.err
    assert "dry run: not written" in dry.out and not out.exists()
    assert not branch_exists(clm_repo, "dev-jinja")
    result = convert(clm_repo, "--from", "dev", "--out", str(out))
    assert result.code == 0, result.err
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == \
        sorted(CLM_FILES)
    again = convert(clm_repo, "--from", "dev", "--out", str(out))
    assert again.code == 1 and "is not an empty directory" in again.err


def test_a_directory_converts_too(clm_repo: ConfigRepoBuilder, tmp_path: Path) -> None:
    out = tmp_path / "from-dir"
    result = convert(clm_repo, "--from", str(clm_repo.path), "--out", str(out), "--check",
                     "--ec2", "offline")
    assert result.code == 1  # main is checked out: it has no cluster/
    assert "has no cluster/ directory" in result.err
    clm_repo.git("checkout", "--quiet", "dev")
    result = convert(clm_repo, "--from", str(clm_repo.path), "--out", str(out), "--check",
                     "--ec2", "offline")
    assert result.code == 0, result.err
    assert (out / "cluster/cluster.yaml").read_text().startswith("Description: main stack of {{")


def test_all_channels_each_onto_its_own_branch(clm_repo: ConfigRepoBuilder) -> None:
    clm_repo.commit("beta", {"cluster/manifests/app/config.yaml":
                             "kind: ConfigMap\nbeta: {{ .Cluster.Channel }}\n"}, "beta differs")
    result = convert(clm_repo, "--all-channels", "--check", "--ec2", "offline")
    assert result.code == 0, result.err
    for channel in ("dev", "alpha", "beta", "stable"):
        assert clm_repo.git("rev-parse", f"{channel}-jinja^") == clm_repo.sha(channel)
        assert f"{channel} (" in result.out
    beta = clm_repo.git("show", "beta-jinja:cluster/manifests/app/config.yaml")
    assert beta == "kind: ConfigMap\nbeta: {{ Cluster.Channel }}"


def test_an_unconvertible_construct_is_refused_with_file_line_and_construct(
        clm_repo: ConfigRepoBuilder) -> None:
    clm_repo.commit("dev", {"cluster/manifests/app/loop.yaml":
                            "a: 1\n{{ range .Cluster.NodePools }}{{ break }}{{ end }}\n"},
                    "A loop that breaks")
    result = convert(clm_repo, "--from", "dev", "--check", "--ec2", "offline")
    assert result.code == 1
    assert "cluster/manifests/app/loop.yaml:2" in result.err and "break" in result.err
    assert "nothing was written" in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert not branch_exists(clm_repo, "dev-jinja")


def test_a_differing_render_is_refused_with_the_first_differing_lines(
        clm_repo: ConfigRepoBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    # The converted side made to print as Python does (as the converter did before it printed
    # with Go's fmt): a list comes out `['a', 'b']` where Go writes `[a b]`. Only rendering
    # shows it: the check must catch it.
    monkeypatch.setattr("clmgit.config.templates.output_value", str)
    clm_repo.commit("dev", {"cluster/manifests/app/zones.yaml":
                            "kind: ConfigMap\nzones: {{ .Values.availability_zones }}\n"},
                    "Print the zones")
    result = convert(clm_repo, "--from", "dev", "--check", "--ec2", "offline")
    assert result.code == 1
    assert "→ branch dev-jinja (not written)" in result.out
    assert "cluster/manifests/app/zones.yaml:" in result.out
    assert "-zones: [eu-central-1a eu-central-1b eu-central-1c]" in result.out
    assert "+zones: ['eu-central-1a', 'eu-central-1b', 'eu-central-1c']" in result.out
    # two files per cluster print values Python prints otherwise: 3 sample clusters, 1 variant
    assert "8 rendered file(s) differ" in result.err and "nothing was written" in result.err
    assert not branch_exists(clm_repo, "dev-jinja")
    # without --check it converts: the difference is the check's to find
    assert convert(clm_repo, "--from", "dev").code == 0


@pytest.mark.parametrize(("args", "message"), [
    (("--from", "nope"), "nope is neither a directory nor a branch, tag or commit"),
    (("--from", "main"), "has no cluster/ directory, so it is not a CLM repository"),
])
def test_bad_input_is_one_sentence(clm_repo: ConfigRepoBuilder, args: tuple[str, ...],
                                   message: str) -> None:
    result = convert(clm_repo, *args)
    assert result.code == 1
    assert message in result.err and len(result.err.strip().splitlines()) == 1


def test_not_a_clm_repository_and_not_a_repository(clm_repo: ConfigRepoBuilder,
                                                   tmp_path: Path) -> None:
    clm_repo.commit("other", {"cluster/stack.yaml": "v: {{ cluster.id }}\n"}, "clmgit layout")
    result = convert(clm_repo, "--from", "other")
    assert result.code == 1 and "has no cluster/cluster.yaml (CLM's main stack)" in result.err
    result = run_cli("--repo", str(tmp_path / "nowhere"), "convert", "--from", "dev")
    assert result.code == 1 and "is not a git repository" in result.err


def test_an_existing_branch_is_never_overwritten(clm_repo: ConfigRepoBuilder) -> None:
    before = clm_repo.sha("alpha")
    result = convert(clm_repo, "--from", "dev", "--onto", "alpha")
    assert result.code == 1
    assert "branch alpha exists already" in result.err
    assert clm_repo.sha("alpha") == before
    assert convert(clm_repo, "--from", "dev").code == 0
    again = convert(clm_repo, "--from", "dev")
    assert again.code == 1 and "branch dev-jinja exists already" in again.err


def commit_link(b: ConfigRepoBuilder, branch: str, path: str, target: str) -> None:
    """A symbolic link `path` → `target` committed on `branch` (git plumbing: mode 120000)."""
    index = str(b.path / ".git" / "test-link-index")
    env = {"GIT_INDEX_FILE": index}
    run = lambda *a, data=None: run_git(a, cwd=b.path, stdin=data, env=env)  # noqa: E731
    run("read-tree", branch)
    blob = run("hash-object", "-w", "--stdin", data=target.encode()).stdout.decode().strip()
    run("update-index", "--add", "--cacheinfo", f"120000,{blob},{path}")
    tree = run("write-tree").stdout.decode().strip()
    new = run("commit-tree", tree, "-p", branch, "-m", f"Link {path}").stdout.decode().strip()
    b.git("update-ref", f"refs/heads/{branch}", new)
    Path(index).unlink()


def test_a_linked_profile_file_becomes_the_file_it_points_to(
        clm_repo: ConfigRepoBuilder) -> None:
    commit_link(clm_repo, "dev", "cluster/node-pools/worker-spot/stack.yaml",
                "../worker-default/stack.yaml")
    result = convert(clm_repo, "--from", "dev", "--check", "--ec2", "offline")
    assert result.code == 0, result.err
    assert "6 files converted" in result.out and "pool-worker-spot (worker-spot)" in result.out
    listing = clm_repo.git("ls-tree", "dev-jinja", "cluster/node-pools/worker-spot/stack.yaml")
    assert listing.startswith("100644 blob ")
    assert clm_repo.git("show", "dev-jinja:cluster/node-pools/worker-spot/stack.yaml") == \
        clm_repo.git("show", "dev-jinja:cluster/node-pools/worker-default/stack.yaml")


def test_a_link_to_nothing_is_refused(clm_repo: ConfigRepoBuilder) -> None:
    commit_link(clm_repo, "dev", "cluster/node-pools/worker-spot/stack.yaml", "../gone.yaml")
    result = convert(clm_repo, "--from", "dev")
    assert result.code == 1
    assert "cluster/node-pools/worker-spot/stack.yaml is a link to cluster/node-pools/gone.yaml"\
        in result.err
    assert not branch_exists(clm_repo, "dev-jinja")


def test_a_directory_onto_a_branch_replaces_cluster_of_head(clm_repo: ConfigRepoBuilder,
                                                            tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    for path, text in CLM_FILES.items():
        if "manifests/app/config.yaml" not in path:  # one file fewer than main's cluster/
            (checkout / path).parent.mkdir(parents=True, exist_ok=True)
            (checkout / path).write_text(text)
    clm_repo.commit("main", {"cluster/cluster.yaml": "old\n",
                             "cluster/manifests/app/config.yaml": "old\n"}, "An older cluster/")
    head = clm_repo.sha("main")
    result = convert(clm_repo, "--from", str(checkout))
    assert result.code == 1 and "pass --out DIR, or --onto BRANCH" in result.err
    result = convert(clm_repo, "--from", str(checkout), "--onto", "converted")
    assert result.code == 0, result.err
    assert clm_repo.git("rev-parse", "converted^") == head
    files = clm_repo.git("ls-tree", "-r", "--name-only", "converted", "cluster").split()
    assert sorted(files) == sorted(p for p in CLM_FILES if "manifests/app/config.yaml" not in p)


@pytest.mark.parametrize(("args", "message"), [
    (("--all-channels", "--onto", "x"), "drop --onto"),
    ((), "pass either --from REF_OR_DIR or --all-channels"),
    (("--from", "dev", "--all-channels"), "pass either --from REF_OR_DIR or --all-channels"),
    (("--from", "dev", "--onto", "x", "--out", "y"), "pass either --onto BRANCH or --out DIR"),
    (("--from", "dev", "--ec2", "cloud"), "'--ec2'"),
])
def test_usage_errors_exit_2(clm_repo: ConfigRepoBuilder, args: tuple[str, ...],
                             message: str) -> None:
    result = convert(clm_repo, *args)
    assert result.code == 2, (result.out, result.err)
    assert message in result.err and "Traceback" not in result.err
    assert not branch_exists(clm_repo, "dev-jinja") and not branch_exists(clm_repo, "x")


def test_a_channel_only_on_origin_is_read_from_there(clm_repo: ConfigRepoBuilder) -> None:
    clm_repo.git("branch", "-D", "alpha")  # a fresh clone has only its default branch
    for ref in ("alpha", "origin/beta", "refs/heads/dev"):
        result = convert(clm_repo, "--from", ref)
        assert result.code == 0, result.err
    assert clm_repo.git("rev-parse", "alpha-jinja^") == clm_repo.sha("origin/alpha")
    assert clm_repo.git("rev-parse", "beta-jinja^") == clm_repo.sha("origin/beta")
    assert clm_repo.git("rev-parse", "dev-jinja^") == clm_repo.sha("dev")
