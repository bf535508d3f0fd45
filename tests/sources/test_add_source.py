"""Adding a second config source to a running fleet (`clmgit sources add`), through the real CLI
on real repositories with bare origins: a fleet on one source with bare `sha:` pins gets the
source in one commit, no cluster is blocked, the channel files keep every byte but their pins,
and `promote`, `diff` and `status` go on working."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml
from clmgit_sandbox.configrepo import ConfigRepoBuilder, cluster_record

from clmgit.model import desired_version, parse_cluster
from clmgit.reconcile.pins import CurrentPins
from clmgit.registry.file import clusters_yaml
from clmgit.workspace import open_workspace
from tests.helpers.cli import Result, run_cli
from tests.helpers.sources import two_sources

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default}}\n"
MAIN_TREE = {"cluster/stack.yaml": "Resources: {}\n",
             "cluster/node-pools/worker-default/stack.yaml": "Resources: {}\n",
             "cluster/manifests/app/cm.yaml": CM.format(name="main-app")}
ADDONS_TREE = {"cluster/manifests/extra/cm.yaml": CM.format(name="addon-v1")}
SETTINGS = "# how this repository is read\nlayout: clmgit\n"

BETA = """\
# beta: pinned per group, written by people
channel: beta
source: dev

groups:
  - name: canary   # first
    selector: {{alias: "*-canary"}}
    sha: {sha}
    promoted_at: "2026-01-01T00:00:00Z"
  - name: default
    sha: '{sha}'   # quoted on purpose
"""
STABLE = """\
channel: stable
source: beta
{frozen}groups:
  - name: default
    sha: {sha}
"""


@dataclass
class Fleet:
    main: ConfigRepoBuilder
    addons: ConfigRepoBuilder
    origin: Path
    v1: str
    v2: str

    def cli(self, *args: str) -> Result:
        return run_cli("--repo", str(self.main.path), *args)

    def add(self, *args: str) -> Result:
        return self.cli("sources", "add", "addons", "--repo", str(self.addons.path), *args)

    def text(self, path: str) -> str:
        return (self.main.path / path).read_text()

    def control(self) -> str:
        return self.main.sha("main")


def _fleet(tmp_path: Path, *, frozen: bool = False, addons_branches: tuple[str, ...] = (
        "beta", "stable")) -> Fleet:
    """Main at v1 on beta and stable (bare pins), v2 on dev; every cluster in sync on one
    source. The add-ons repository has `dev` and the branches named."""
    addons = ConfigRepoBuilder(tmp_path / "addons")
    addons.commit("dev", ADDONS_TREE, "Add-ons")
    for branch in addons_branches:
        addons.git("branch", branch, "dev")
    addons.add_origin()
    main = ConfigRepoBuilder(tmp_path / "config")
    v1 = main.commit("dev", MAIN_TREE, "Base")
    main.git("branch", "beta", "dev")
    main.git("branch", "stable", "dev")
    v2 = main.commit("dev", {"cluster/stack.yaml": "Resources: {}\n# v2\n"}, "Main v2")
    freeze = "frozen: true\nfreeze_reason: holidays\n" if frozen else ""
    records = [cluster_record(f"aws:1:eu-central-1:{name}", channel=name.split("-")[0])
               for name in ("dev-1", "beta-canary", "beta-1", "beta-2", "stable-1", "stable-2")]
    for r in records:
        sha = v2 if r["channel"] == "dev" else v1
        r["status"] = {"current_version": desired_version(sha, parse_cluster(r, "r"))}
    main.commit("main", {
        "clmgit.yaml": SETTINGS,
        "channels/dev.yaml": "channel: dev\nbranch: dev\n",
        "channels/beta.yaml": BETA.format(sha=v1),
        "channels/stable.yaml": STABLE.format(sha=v1, frozen=freeze),
        "clusters.yaml": clusters_yaml(records),
    }, "Channels and clusters")
    return Fleet(main, addons, main.add_origin(), v1, v2)


def _without_pins(text: str) -> list[str]:
    return [line for line in text.splitlines()
            if not line.lstrip().startswith(("sha:", "promoted_at:"))]


def test_adding_a_source_pins_every_group_in_one_commit(tmp_path) -> None:
    fleet = _fleet(tmp_path)
    before = {p: fleet.text(p) for p in ("channels/dev.yaml", "channels/beta.yaml",
                                         "channels/stable.yaml")}
    control = fleet.control()
    head = fleet.addons.sha("beta")

    result = fleet.add()

    assert result.code == 0, result.err
    assert fleet.main.git("rev-parse", "main~1") == control  # one commit
    assert fleet.text("channels/dev.yaml") == before["channels/dev.yaml"]
    for path in ("channels/beta.yaml", "channels/stable.yaml"):
        assert _without_pins(fleet.text(path)) == _without_pins(before[path])
    beta = fleet.text("channels/beta.yaml")
    assert f"    sha: {{main: {fleet.v1}, addons: {head}}}\n" in beta
    assert f"    sha: {{main: {fleet.v1}, addons: {head}}}   # quoted on purpose\n" in beta
    assert fleet.text("clmgit.yaml") == (
        f"{SETTINGS}sources:\n  - name: main\n  - name: addons\n    repo: {fleet.addons.path}\n")
    body = fleet.main.git("log", "-1", "--format=%B", "main")
    assert body.startswith("add-source(addons): pin 3 group(s) of 2 channel(s)")
    assert "Clmgit-Action: add-source" in body and "Clmgit-Channel: beta,stable" in body
    synced = fleet.cli("sync-branches", "--dry-run")  # every branch is where its pins are
    assert (synced.code, synced.out) == (0, "every channel branch is where its pins are\n")


def test_no_cluster_is_blocked_and_each_is_out_of_sync_on_clms_version(tmp_path) -> None:
    fleet = _fleet(tmp_path)
    assert fleet.add().code == 0

    result = fleet.cli("status", "-o", "json")

    assert result.code == 0, result.err
    items = json.loads(result.out)["items"]
    assert {i["id"].rsplit(":", 1)[1]: i["state"] for i in items} == dict.fromkeys(
        ("dev-1", "beta-canary", "beta-1", "beta-2", "stable-1", "stable-2"), "pending")
    beta = next(i for i in items if i["id"].endswith("beta-1"))
    version = f"main={fleet.v1};addons={fleet.addons.sha('beta')}"
    assert beta["pinned_sha"] == version
    # Reconcile reads the pins anew under each cluster's lease: CLM's version string.
    ws = open_workspace(str(fleet.main.path))
    record = ws.cluster(beta["id"])
    pins = CurrentPins(ws.repo, "main", sources=ws.source_repos)
    assert pins(record) == (version, "default")
    assert desired_version(version, record).startswith(f"{version}#")


def test_promote_and_diff_after_adding_compare_like_with_like(tmp_path) -> None:
    fleet = _fleet(tmp_path)
    assert fleet.add().code == 0

    assert fleet.cli("promote", "dev", "beta").code == 0
    diff = fleet.cli("diff", "beta", "stable")

    assert diff.code == 0, diff.err
    assert "1 commit(s) to cluster/" in diff.out
    assert "main: Main v2" in diff.out and "addons:" not in diff.out
    assert "addon-v1" not in diff.out  # the add-on is in both: not rendered as new
    assert "+# v2" in diff.out
    promoted = fleet.cli("promote", "beta", "stable")
    assert promoted.code == 0, promoted.err
    stable = yaml.safe_load(fleet.text("channels/stable.yaml"))
    assert stable["groups"][0]["sha"] == {"main": fleet.v2, "addons": fleet.addons.sha("beta")}


def test_diff_of_pins_that_predate_a_source_compares_like_with_like(tmp_path) -> None:
    """`sources:` written by hand: the target's bare pins are the main source's, and the new
    source is compared at the target's branch head, not rendered as new."""
    fleet = _fleet(tmp_path)
    fleet.main.commit("main", {"clmgit.yaml": SETTINGS + "sources:\n  - name: main\n"
                               f"  - name: addons\n    repo: {fleet.addons.path}\n"}, "Sources")

    diff = fleet.cli("diff", "dev", "stable")

    assert diff.code == 0, diff.err
    assert "1 commit(s) to cluster/" in diff.out and "addon-v1" not in diff.out


def test_status_of_pins_that_predate_a_source_names_the_source_and_the_fix(tmp_path) -> None:
    fleet = _fleet(tmp_path)
    fleet.main.commit("main", {"clmgit.yaml": SETTINGS + "sources:\n  - name: main\n"
                               f"  - name: addons\n    repo: {fleet.addons.path}\n"}, "Sources")

    result = fleet.cli("status", "--channel", "stable", "-o", "json")

    assert result.code == 0, result.err
    assert {(i["state"], i["reason"]) for i in json.loads(result.out)["items"]} == {(
        "blocked", "group 'default' of channel 'stable' has no pin of source 'addons' yet; "
        "promote into 'stable' to pin every source")}


def test_a_frozen_channel_is_pinned_only_when_asked_and_that_is_recorded(tmp_path) -> None:
    fleet = _fleet(tmp_path, frozen=True)
    control, stable = fleet.control(), fleet.text("channels/stable.yaml")

    refused = fleet.add()

    assert refused.code == 1
    assert refused.err.strip().splitlines() == [
        "error: channel 'stable' is frozen (holidays); pass --ignore-freeze to pin source "
        "'addons' there too (recorded), or unfreeze it"]
    assert fleet.control() == control and fleet.text("channels/stable.yaml") == stable

    forced = fleet.add("--ignore-freeze")

    assert forced.code == 0, forced.err
    assert "frozen" in fleet.text("channels/stable.yaml")
    body = fleet.main.git("log", "-1", "--format=%B", "main")
    assert "Clmgit-Override: ignore-freeze" in body and "- ignore-freeze: stable" in body
    history = fleet.cli("history", "stable")
    assert history.code == 0 and "!" in history.out


def test_dry_run_json_and_push(tmp_path) -> None:
    fleet = _fleet(tmp_path)
    control = fleet.control()

    dry = fleet.add("--dry-run", "-o", "json")

    assert dry.code == 0, dry.err
    doc = json.loads(dry.out)
    assert list(doc) == ["apiVersion", "kind", "result", "dry_run", "errors"]
    assert doc["kind"] == "SourceAdded" and doc["result"]["outcome"] == "dry-run"
    assert doc["result"]["files"] == ["clmgit.yaml", "channels/beta.yaml",
                                      "channels/stable.yaml"]
    assert fleet.control() == control

    pushed = fleet.add("--push")

    assert pushed.code == 0, pushed.err
    origin = fleet.main.git("--git-dir", str(fleet.origin), "rev-parse", "main")
    assert origin == fleet.control() != control


def test_a_channel_may_take_another_branch_of_the_source(tmp_path) -> None:
    fleet = _fleet(tmp_path, addons_branches=("beta",))
    fleet.addons.git("branch", "addons-stable", "dev")
    other = fleet.addons.commit("addons-stable", {"cluster/manifests/extra/cm.yaml":
                                                  CM.format(name="addon-stable")}, "Stable")

    result = fleet.add("--branch", "stable=addons-stable")

    assert result.code == 0, result.err
    assert "    branches: {stable: addons-stable}\n" in fleet.text("clmgit.yaml")
    stable = yaml.safe_load(fleet.text("channels/stable.yaml"))
    assert stable["groups"][0]["sha"] == {"main": fleet.v1, "addons": other}


def _refused(fleet: Fleet, result: Result, sentence: str) -> None:
    assert result.code == 1, result.out
    assert result.err.strip().splitlines() == [f"error: {sentence}"]


def test_bad_input_is_refused_with_one_sentence_and_nothing_written(tmp_path) -> None:
    fleet = _fleet(tmp_path, addons_branches=("beta",))
    control = fleet.control()
    missing = tmp_path / "nowhere"

    _refused(fleet, fleet.cli("sources", "add", "main", "--repo", str(fleet.addons.path)),
             "config source 'main' is already listed in clmgit.yaml (sources: main)")
    _refused(fleet, fleet.cli("sources", "add", "Add_ons", "--repo", str(fleet.addons.path)),
             "a source's name is of [a-z0-9-]+, not 'Add_ons'")
    _refused(fleet, fleet.add("--branch", "prod=x"),
             "unknown channel 'prod' (channels: dev, beta, stable)")
    _refused(fleet, fleet.cli("sources", "add", "addons", "--repo", str(missing)),
             f"config source 'addons' cannot be read: {missing} does not exist")
    _refused(fleet, fleet.add(),
             "config source 'addons' has no branch 'stable' for channel 'stable'; create it, "
             "or name another with --branch stable=BRANCH")
    secret = "https://deploy:s3cr3t-token@github.example/org/addons.git"
    leaked = fleet.cli("sources", "add", "addons", "--repo", secret)
    _refused(fleet, leaked, "--repo https://deploy:***@github.example/org/addons.git carries "
             "credentials, which would be committed in clmgit.yaml; give the URL without them "
             "(git's credential helper supplies them)")
    assert "s3cr3t" not in leaked.out + leaked.err
    assert fleet.control() == control
    assert fleet.main.git("status", "--porcelain") == ""


def test_a_source_is_added_once(tmp_path) -> None:
    fleet = _fleet(tmp_path)
    assert fleet.add().code == 0
    control = fleet.control()

    _refused(fleet, fleet.add(),
             "config source 'addons' is already listed in clmgit.yaml (sources: main, addons)")
    assert fleet.control() == control


def test_an_unreachable_url_is_refused(tmp_path) -> None:
    fleet = _fleet(tmp_path)
    control = fleet.control()

    result = fleet.cli("sources", "add", "addons", "--repo", f"file://{tmp_path}/gone.git")

    assert result.code == 1 and len(result.err.strip().splitlines()) == 1, result.err
    assert result.err.startswith("error: config source 'addons' cannot be read")
    assert fleet.control() == control


def test_a_third_source_joins_pins_that_name_two(tmp_path) -> None:
    repos = two_sources(tmp_path, main_tree=MAIN_TREE, addons_tree=ADDONS_TREE, records=[])
    assert run_cli("--repo", str(repos.main.path), "promote", "dev", "beta", "--force").code == 0
    extra = ConfigRepoBuilder(tmp_path / "extra")
    head = extra.commit("beta", {"cluster/manifests/more/cm.yaml": CM.format(name="more")},
                        "More")
    extra.git("branch", "dev", "beta")

    result = run_cli("--repo", str(repos.main.path), "sources", "add", "extra", "--repo",
                     str(extra.path))

    assert result.code == 0, result.err
    beta = yaml.safe_load((repos.main.path / "channels/beta.yaml").read_text())
    assert [g["sha"] for g in beta["groups"]] == [{
        "main": repos.sha("main", "dev"), "addons": repos.sha("addons", "dev"),
        "extra": head}] * 2
    settings = (repos.main.path / "clmgit.yaml").read_text()
    assert settings.endswith(f"  - name: addons\n    repo: {tmp_path / 'addons'}\n"
                             f"  - name: extra\n    repo: {extra.path}\n")
