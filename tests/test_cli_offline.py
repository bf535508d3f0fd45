"""`render` and `diff` of a CLM-layout repo need no AWS: they run in a process where boto3 and
botocore cannot be imported (the account's port and values are in `clmgit.accounts`; boto3 is
imported only where a real AWS client is built)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.clm_layout import SMALL_TREE, clm_repo

#: The CLI's entry point with boto3 and botocore unimportable (None in sys.modules).
WITHOUT_BOTO3 = ("import sys; sys.modules['boto3'] = None; sys.modules['botocore'] = None; "
                 "from clmgit.cli import main; main()")


def clmgit_without_boto3(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_BOTO3, *args], capture_output=True,
                          text=True, timeout=120, check=False)


def test_the_guard_makes_boto3_unimportable() -> None:
    """The guard works: a command that needs AWS cannot start under it."""
    result = subprocess.run([sys.executable, "-c", WITHOUT_BOTO3.replace(
        "from clmgit.cli import main; main()", "import clmgit.adapters.aws.session")],
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode != 0 and "import of boto3 halted" in result.stderr


def test_render_and_diff_of_a_clm_layout_repo_import_no_boto3(tmp_path: Path) -> None:
    builder = clm_repo(tmp_path)
    changed = dict(SMALL_TREE, **{"cluster/etcd/stack.yaml": SMALL_TREE["cluster/etcd/stack.yaml"]
                                  + "    Properties: {VisibilityTimeout: 60}\n"})
    builder.commit("dev", changed, "etcd change")
    dev = builder.git("rev-parse", "dev").strip()
    out = tmp_path / "out"

    render = clmgit_without_boto3("--repo", str(builder.path), "render", "--cluster", "kube-1",
                                  "--sha", dev, "--out", str(out))
    diff = clmgit_without_boto3("--repo", str(builder.path), "diff", "dev", "alpha")

    assert render.returncode == 0, render.stderr
    etcd = next(out.rglob("*etcd-cluster-etcd*"))
    assert "VisibilityTimeout: 60" in etcd.read_text()
    assert any("x-kube-1" in p.name for p in out.rglob("*"))
    assert diff.returncode == 0, diff.stderr
    assert "+++ b/stacks/etcd-cluster-etcd.yaml" in diff.stdout
    assert "+    Properties: {VisibilityTimeout: 60}" in diff.stdout
    assert "failed" not in diff.stdout
