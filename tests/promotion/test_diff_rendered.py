"""`clmgit diff` with the rendered diff, through the CLI on a real repo: a changed manifest shows,
a secret config item value never does, `--cluster` narrows, bad input exits 1 with one line;
and `format_report`, the text a promotion pull request carries."""

from __future__ import annotations

import base64
import json

import pytest
from clmgit_sandbox.configrepo import cluster_record

from clmgit.promotion.preview import format_report, preview
from clmgit.workspace import open_workspace
from tests.helpers.fleet import Fleet

TOKEN = "tok-9f8e7d6c5b4a"  # the value of a secret-looking config item of every beta cluster
DEPLOYMENT = "cluster/manifests/app/deployment.yaml"
TREE = {
    "cluster/stack.yaml": "Description: main stack of {{ cluster.local_id }}\n",
    "cluster/node-pools/worker-default/stack.yaml": "Description: {{ node_pool.name }}\n",
    "cluster/config-defaults.yaml": "replicas: 2\n",
    "cluster/manifests/app/secret.yaml": (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: app, namespace: default}\n"
        "data:\n  token: {{ cluster.config_items.api_token | base64 }}\n"
    ),
}
DEPLOYMENT_TEXT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: app, namespace: default}}\n"
    "spec:\n  replicas: {{{{ cluster.config_items.replicas }}}}\n"
    "  template:\n    metadata:\n      annotations:\n"
    "        {annotation}: \"{{{{ cluster.config_items.api_token }}}}\"\n"
)


@pytest.fixture
def pinned(fleet: Fleet) -> Fleet:
    """beta's groups pinned to a commit with a real tree; dev one commit further, in which the
    deployment changes (more replicas, the token under another annotation)."""
    records = [
        cluster_record(f"aws:123456789012:eu-central-1:{name}", channel="beta", alias=name,
                       config_items={"api_token": TOKEN})
        for name in ("beta-canary", "beta-1", "beta-2")
    ]
    fleet.set_clusters(records)
    old = fleet.builder.commit(
        "dev", {**TREE, DEPLOYMENT: DEPLOYMENT_TEXT.format(annotation="token")}, "An app"
    )
    r = fleet.cli("promote", "dev", "beta", "--sha", old, "--force", "--from-any")
    assert r.code == 0, r.err
    fleet.builder.commit(
        "dev",
        {"cluster/config-defaults.yaml": "replicas: 3\n",
         DEPLOYMENT: DEPLOYMENT_TEXT.format(annotation="auth")},
        "Three replicas",
    )
    return fleet


def secret_shows(text: str) -> bool:
    return TOKEN in text or base64.b64encode(TOKEN.encode()).decode() in text


def test_a_changed_manifest_shows_in_the_diff_with_the_secret_masked(pinned: Fleet) -> None:
    r = pinned.cli("diff", "dev", "beta")
    assert r.code == 0, r.err
    assert "canary: " in r.out and "default: " in r.out  # both groups, in file order
    assert r.out.index("canary: ") < r.out.index("default: ")
    assert "Three replicas" in r.out
    assert "--- a/manifests/app/deployment_default_app.yaml" in r.out
    assert "\n-  replicas: 2\n+  replicas: 3\n" in r.out
    assert "\n-        token: ***\n+        auth: ***\n" in r.out
    assert "# canary: cluster aws:123456789012:eu-central-1:beta-canary" in r.out
    assert "# default: cluster aws:123456789012:eu-central-1:beta-1" in r.out
    assert not secret_shows(r.out) and not secret_shows(r.err)


def test_json_carries_the_rendered_files(pinned: Fleet) -> None:
    r = pinned.cli("diff", "dev", "beta", "--output", "json")
    assert r.code == 0, r.err
    groups = json.loads(r.out)["items"]
    assert [g["group"] for g in groups] == ["canary", "default"]
    rendered = groups[1]["rendered"]
    assert rendered["cluster"].endswith(":beta-1") and rendered["omitted"] == []
    files = {f["path"]: f for f in rendered["files"]}
    assert list(files) == ["manifests/app/deployment_default_app.yaml"]
    assert files["manifests/app/deployment_default_app.yaml"]["status"] == "changed"
    assert "+  replicas: 3" in files["manifests/app/deployment_default_app.yaml"]["diff"]
    assert not secret_shows(r.out)


def test_cluster_narrows_to_its_group_and_is_the_one_rendered(pinned: Fleet) -> None:
    r = pinned.cli("diff", "dev", "beta", "--cluster", "beta-2", "--output", "json")
    assert r.code == 0, r.err
    (only,) = json.loads(r.out)["items"]
    assert only["group"] == "default"
    assert only["rendered"]["cluster"] == "aws:123456789012:eu-central-1:beta-2"
    r = pinned.cli("diff", "dev", "beta", "--cluster", "beta-2")
    assert "canary" not in r.out and "cluster aws:123456789012:eu-central-1:beta-2" in r.out



def test_the_source_may_be_named_with_one_source_as_the_preview_workflow_does(
        pinned: Fleet) -> None:
    """`--sha main=SHA` (this repository's source named) is the bare SHA with one source."""
    head = pinned.builder.sha("dev")
    pinned.builder.commit("dev", {"cluster/config-defaults.yaml": "replicas: 4\n"}, "Four")
    named = pinned.cli("diff", "dev", "beta", "--sha", f"main={head}")
    bare = pinned.cli("diff", "dev", "beta", "--sha", head)
    assert named.code == 0, named.err
    assert named.out == bare.out and "Three replicas" in named.out and "Four" not in named.out
    other = pinned.cli("diff", "dev", "beta", "--sha", f"addons={head}")
    assert other.code == 1 and "unknown config source 'addons'" in other.err

@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cluster", "nope"], "no cluster 'nope'"),
        (["--cluster", "dev-1"], "is in channel 'dev', not 'beta'"),
        (["--cluster", "beta-1", "--group", "canary"], "is in group 'default'"),
        (["--group", "nope"], "has no group 'nope'"),
        (["--sha", "0" * 40], "0000000"),
    ],
)
def test_bad_input_exits_1_with_one_line(pinned: Fleet, args: list[str], message: str) -> None:
    pinned.set_clusters([
        cluster_record("aws:123456789012:eu-central-1:dev-1", channel="dev"),
        cluster_record("aws:123456789012:eu-central-1:beta-1", channel="beta"),
    ])
    r = pinned.cli("diff", "dev", "beta", *args)
    assert r.code == 1, r.out
    assert message in r.err and len(r.err.strip().splitlines()) == 1
    assert "Traceback" not in r.err and r.out == ""


def test_a_broken_template_at_the_new_sha_is_shown_with_file_and_line(pinned: Fleet) -> None:
    pinned.builder.commit("dev", {DEPLOYMENT: "kind: x\nspec: {{ nope }}\n"}, "Broken")
    r = pinned.cli("diff", "dev", "beta", "--cluster", "beta-1")
    assert r.code == 0, r.err
    assert "Broken" in r.out and "Three replicas" in r.out
    assert "for cluster aws:123456789012:eu-central-1:beta-1 failed: " in r.out
    assert f"{DEPLOYMENT}:2: 'nope' is undefined" in r.out


def test_a_group_without_clusters_says_so(pinned: Fleet) -> None:
    pinned.set_clusters([cluster_record("aws:123456789012:eu-central-1:beta-1", channel="beta",
                                        config_items={"api_token": TOKEN})])
    r = pinned.cli("diff", "dev", "beta", "--output", "json")
    canary, default = json.loads(r.out)["items"]
    assert canary["rendered"] is None
    assert "no cluster of 'beta' is in group 'canary'" in canary["note"]
    assert default["rendered"]["files"]


def test_the_rendered_diff_is_capped_with_a_note(pinned: Fleet) -> None:
    pinned.builder.commit("dev", {f"cluster/manifests/app/cm-{i}.yaml": (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i}, namespace: default}}\n"
        f"data: {{n: '{i}'}}\n") for i in range(5)}, "Five config maps")
    ws = open_workspace(str(pinned.path))
    (item,) = preview(ws, source="dev", target="beta", groups=["default"], rendered_limit=400)
    rendered = item.rendered
    assert rendered is not None and rendered.files and rendered.omitted
    assert sum(len(f.text) for f in rendered.files) <= 400
    assert "cut at 400 characters" in rendered.note
    assert f"{len(rendered.omitted)} more changed file(s) not shown" in rendered.note


def test_the_report_in_markdown_fences_the_diff(pinned: Fleet) -> None:
    ws = open_workspace(str(pinned.path))
    text = format_report(preview(ws, source="dev", target="beta", groups=["canary"]), markdown=True)
    assert text.startswith("### `canary`: `")
    assert "- `" in text and "Three replicas" in text
    assert "\n```diff\n--- a/manifests/app/deployment_default_app.yaml\n" in text
    assert text.rstrip().endswith("```")
    assert not secret_shows(text)
    plain = format_report(preview(ws, source="dev", target="beta", groups=["canary"]))
    assert plain.startswith("canary: ") and "+  replicas: 3" in plain


def test_markdown_fence_outlasts_backticks_in_the_diff(pinned: Fleet) -> None:
    readme = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: readme, namespace: default}\n" \
             "data:\n  README.md: |\n    ```bash\n    make\n    ```\n"
    pinned.builder.commit("dev", {"cluster/manifests/app/readme.yaml": readme}, "A readme")
    ws = open_workspace(str(pinned.path))
    text = format_report(preview(ws, source="dev", target="beta", groups=["default"]),
                         markdown=True)
    assert "\n````diff\n" in text and text.endswith("\n````")
    assert "+    ```bash\n" in text
