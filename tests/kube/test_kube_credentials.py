"""The three ways to a cluster's API server besides a plain kubeconfig: a kubeconfig whose user
runs an `exec` credential plugin, a token from STS for an EKS cluster (no kubeconfig at all), and
one bearer token; chosen per cluster by `--kube-auth`."""

from __future__ import annotations

import base64
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import boto3
import pytest
import yaml
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi import server as emulator
from clmgit_sandbox.kubeapi.kubeconfig import cluster_entry

from clmgit.access import Access
from clmgit.adapters.aws.identity import EKS_TOKEN_PREFIX, eks_token
from clmgit.engine.kube import PODS
from clmgit.model import Cluster
from clmgit.reconcile.backends import kube_for

PLUGIN = """\
import json, pathlib, sys
token = pathlib.Path(sys.argv[1]).read_text()
pathlib.Path(sys.argv[2]).write_text("ran")
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1",
                  "kind": "ExecCredential", "status": {"token": token}}))
"""


def test_a_kubeconfig_with_an_exec_plugin_reaches_the_emulator(
        server: KubeAPIServer, tmp_path: Path) -> None:
    (tmp_path / "plugin.py").write_text(PLUGIN)
    (tmp_path / "token").write_text(server.token)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
                     "command": sys.executable, "interactiveMode": "Never",
                     "args": [str(tmp_path / "plugin.py"), str(tmp_path / "token"),
                              str(tmp_path / "ran")]}}
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "kube-1",
        "clusters": [{"name": "kube-1", "cluster": cluster_entry(server.url, server.ca_pem)}],
        "users": [{"name": "plugin", "user": user}],
        "contexts": [{"name": "kube-1", "context": {"cluster": "kube-1", "user": "plugin"}}]}))
    cluster = Cluster(id="aws:123456789012:eu-central-1:kube-1", alias="kube-1")

    kube = kube_for(cluster, Access(kubeconfig=str(path), kube_auth="kubeconfig"),
                    lambda: pytest.fail("no AWS session for a kubeconfig"))

    assert kube.resolve("Pod") == PODS
    assert (tmp_path / "ran").read_text() == "ran"


def verified_by_sts(token: str, cluster_name: str) -> bool:
    """What EKS does with a token: the presigned GetCallerIdentity it holds, asked of STS
    (moto here) with the header that names the cluster."""
    if not token.startswith(EKS_TOKEN_PREFIX):
        return False
    encoded = token.removeprefix(EKS_TOKEN_PREFIX)
    url = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    if query.get("Action") != ["GetCallerIdentity"] or "x-k8s-aws-id" not in query.get(
            "X-Amz-SignedHeaders", [""])[0].split(";"):
        return False
    # moto picks the service from an Authorization header: the query's signature as one.
    signed = (f"AWS4-HMAC-SHA256 Credential={query['X-Amz-Credential'][0]}, SignedHeaders="
              f"{query['X-Amz-SignedHeaders'][0]}, Signature={query['X-Amz-Signature'][0]}")
    request = urllib.request.Request(url, headers={"x-k8s-aws-id": cluster_name,
                                                   "Authorization": signed})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.status == 200 and b"GetCallerIdentityResult" in answer.read()


@pytest.fixture
def eks_emulator(server: KubeAPIServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The emulator taking what EKS takes: tokens STS vouches for (the ones it saw)."""
    seen: list[str] = []

    def authenticate(handler: emulator._Handler, expected: str) -> None:
        given = handler.headers.get("Authorization", "").removeprefix("Bearer ")
        if not verified_by_sts(given, "kube-1"):
            raise emulator.unauthorized()
        seen.append(given)

    monkeypatch.setattr(emulator._Handler, "_authenticate", authenticate)
    return seen


def test_an_eks_cluster_is_reached_with_a_token_from_sts_and_no_kubeconfig(
        server: KubeAPIServer, eks_emulator: list[str], moto_endpoint: str,
        tmp_path: Path) -> None:
    cluster = Cluster(id="aws:123456789012:eu-central-1:kube-1", alias="kube-1",
                      region="eu-central-1", provider="zalando-eks",
                      config_items={"eks_endpoint": server.url,
                                    "eks_certificate_authority_data":
                                        base64.b64encode(server.ca_pem).decode()})
    session = boto3.Session(region_name="eu-central-1")

    kube = kube_for(cluster, Access(), lambda: session)  # auto: EKS for zalando-eks

    assert kube.resolve("Pod") == PODS
    assert eks_emulator and all(t.startswith(EKS_TOKEN_PREFIX) for t in eks_emulator)


def test_the_eks_token_names_the_cluster_in_a_signed_header(moto_endpoint: str) -> None:
    token = eks_token(boto3.Session(region_name="eu-central-1"), "kube-1")
    encoded = token.removeprefix(EKS_TOKEN_PREFIX)
    url = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)

    assert token.startswith(EKS_TOKEN_PREFIX) and "=" not in encoded
    assert query["X-Amz-Expires"] == ["60"]
    assert query["X-Amz-SignedHeaders"] == ["host;x-k8s-aws-id"]
    assert verified_by_sts(token, "kube-1")


def test_the_token_mode_takes_one_bearer_token_for_every_cluster(
        server: KubeAPIServer) -> None:
    cluster = Cluster(id="c1", alias="c1", api_server_url=server.http_url)
    access = Access(token=server.token, kubeconfig="/nonexistent", kube_auth="token")

    assert kube_for(cluster, access, lambda: pytest.fail("no session")).resolve("Pod") == PODS
