"""`clmgit render` through the CLI: the cluster's pin, --sha, --out, and a broken template."""

from __future__ import annotations

from tests.conftest import Fleet

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
