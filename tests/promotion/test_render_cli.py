"""`clmgit render` through the CLI: the cluster's pin, --sha, --out, and a broken template."""

from __future__ import annotations

from tests.helpers.fleet import Fleet

STACK = (
    "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n"
    "      QueueName: {{ cluster.local_id }}-q\n"
)


def test_render_at_pin_and_sha(fleet: Fleet, tmp_path) -> None:
    pool = "cluster/node-pools/worker-default/stack.yaml"
    files = {"cluster/stack.yaml": STACK, pool: "Resources: {}\n"}
    sha = fleet.builder.commit("dev", files, "A queue")
    r = fleet.cli("render", "--cluster", "dev-1")
    assert r.code == 0, r.err
    assert "QueueName: dev-1-q" in r.out
    r = fleet.cli("render", "--cluster", "alpha-1", "--sha", sha, "--out", str(tmp_path / "o"))
    assert r.code == 0, r.err
    written = "".join(p.read_text() for p in (tmp_path / "o").rglob("*.yaml"))
    assert "QueueName: alpha-1-q" in written
    r = fleet.cli("render", "--cluster", "alpha-1")
    assert r.code == 1 and "nothing to render" in r.err


def test_broken_template_names_file_and_line(fleet: Fleet) -> None:
    fleet.builder.commit("dev", {"cluster/stack.yaml": "a: 1\nb: {{ nope }}\n"}, "Broken")
    r = fleet.cli("render", "--cluster", "dev-1")
    assert r.code == 1 and "cluster/stack.yaml" in r.err and ":2" in r.err
    assert "Traceback" not in r.err


SECRET = "Hunter2-s3cret/x"
DERIVED = (
    "Resources: {}\nOutputs:\n"
    "  Upper: {{ cluster.config_items.db_password | upper }}\n"
    "  Lower: {{ cluster.config_items.db_password | lower }}\n"
    "  Basic: {{ ('admin:' ~ cluster.config_items.db_password) | base64 }}\n"
    "  Padded: {{ ('ab:' ~ cluster.config_items.db_password ~ ':z') | base64 }}\n"
    "  Url: https://admin:{{ cluster.config_items.db_password | urlencode }}@db.example.org/x\n"
    "  Token: https://{{ cluster.config_items.api_token }}@git.example.org/repo\n"
)


def test_secrets_are_masked_in_derived_forms(fleet: Fleet) -> None:
    """Issue 15, case 9: upper/lower case, base64 of a text containing the secret, and the
    secret URL-encoded or as URL credentials never reach stdout."""
    import base64
    from urllib.parse import quote

    from clmgit_sandbox.configrepo import cluster_record

    fleet.set_clusters([cluster_record("aws:123456789012:eu-central-1:dev-1", channel="dev",
                                       config_items={"db_password": SECRET,
                                                     "api_token": "ghp_abcdef012345"})])
    fleet.builder.commit("dev", {"cluster/stack.yaml": DERIVED}, "Secrets in derived forms")
    r = fleet.cli("render", "--cluster", "dev-1")
    assert r.code == 0, r.err
    leaks = [SECRET, SECRET.upper(), SECRET.lower(), quote(SECRET, safe=""),
             base64.b64encode(f"admin:{SECRET}".encode()).decode()[8:-4],
             base64.b64encode(f"ab:{SECRET}:z".encode()).decode()[4:-4], "ghp_abcdef012345"]
    assert [leak for leak in leaks if leak in r.out] == []
    assert "Url: https://admin:***@db.example.org/x" in r.out
    assert "Token: https://***@git.example.org/repo" in r.out
