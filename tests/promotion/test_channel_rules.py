"""One channel per branch, none on the control branch; pins are commits, in channel
files and in `--sha` / `--to`. Each refusal is one sentence and leaves the checkout as it was."""

from __future__ import annotations

import pytest

from tests.helpers.checkout import snapshot
from tests.helpers.fleet import Fleet


def refused(fleet: Fleet, *args: str) -> str:
    before = snapshot(fleet.path)
    r = fleet.cli(*args)
    assert r.code == 1, (r.code, r.out, r.err)
    assert r.err.startswith("error: ") and r.err.count("\n") == 1 and "Traceback" not in r.err
    assert snapshot(fleet.path) == before
    return r.err


def set_branch(fleet: Fleet, channel: str, branch: str) -> None:
    text = fleet.file(f"channels/{channel}.yaml").replace(
        f"branch: {channel}\n", f"branch: {branch}\n")
    fleet.builder.commit("main", {f"channels/{channel}.yaml": text}, f"{channel} on {branch}")


@pytest.mark.parametrize("args", [("status",), ("sync-branches", "--force", "--push"),
                                  ("promote", "dev", "alpha", "--force")])
def test_a_channel_on_the_control_branch_is_refused(fleet: Fleet, args) -> None:
    set_branch(fleet, "beta", "main")
    err = refused(fleet, *args)
    assert "channels/beta.yaml: branch 'main' is the control branch" in err
    assert fleet.builder.git("--git-dir", str(fleet.origin), "rev-parse", "main") == \
        fleet.builder.git("rev-parse", "origin/main")


def test_two_channels_on_one_branch_are_refused(fleet: Fleet) -> None:
    set_branch(fleet, "stable", "beta")
    err = refused(fleet, "freeze", "stable", "--reason", "x")
    assert "channels/beta.yaml and channels/stable.yaml both name branch 'beta'" in err


def pin(fleet: Fleet, sha: str) -> None:
    text = fleet.file("channels/alpha.yaml") + f"    sha: {sha}\n"
    fleet.builder.commit("main", {"channels/alpha.yaml": text}, "pin alpha by hand")


def test_a_pin_naming_an_annotated_tag_is_refused(fleet: Fleet) -> None:
    fleet.builder.git("tag", "-a", "v2", "-m", "release 2", fleet.c2)
    tag = fleet.builder.git("rev-parse", "v2")
    pin(fleet, tag)
    err = refused(fleet, "status")
    assert (f"channels/alpha.yaml, group 'default': sha {tag} is an annotated tag of commit "
            f"{fleet.c2}, not a commit; pin the commit id") in err


@pytest.mark.parametrize("kind", ["tree", "blob"])
def test_a_pin_naming_a_tree_or_blob_is_refused(fleet: Fleet, kind: str) -> None:
    oid = fleet.builder.git("rev-parse", f"{fleet.c2}^{{tree}}" if kind == "tree"
                            else f"{fleet.c2}:cluster/stack.yaml")
    pin(fleet, oid)
    assert f"sha {oid} is a {kind}, not a commit" in refused(fleet, "status")


def test_sha_and_to_arguments_must_be_commits(fleet: Fleet) -> None:
    fleet.builder.git("tag", "-a", "v2", "-m", "release 2", fleet.c2)
    tag = fleet.builder.git("rev-parse", "v2")
    err = refused(fleet, "promote", "dev", "alpha", "--sha", tag, "--force")
    assert f"{tag} is an annotated tag of commit {fleet.c2}, not a commit; pass the commit id" \
        in err
    tree = fleet.builder.git("rev-parse", f"{fleet.c1}^{{tree}}")
    assert f"{tree[:12]} is a tree, not a commit" in refused(
        fleet, "rollback", "beta", "--to", tree[:12])
    assert "does not exist" in refused(fleet, "promote", "dev", "alpha", "--sha", "1" * 40)
