"""A reconcile that could reach no cluster is refused once, up front, through the CLI: no AWS
credentials, or neither a token nor a readable kubeconfig."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def no_aws(monkeypatch, tmp_path):
    """boto3's standard chain finds nothing: no variables, files or instance role."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def aws(no_aws, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")


def refused(fleet, *args: str) -> str:
    """The one line of a refused run, checked to have changed nothing."""
    before = fleet.file("clusters.yaml")
    result = fleet.cli("reconcile", *args)
    assert result.code == 1, (result.out, result.err)
    assert fleet.file("clusters.yaml") == before
    [line] = result.err.splitlines()
    return line


def test_no_aws_credentials_is_one_refusal(fleet, no_aws, tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")

    line = refused(fleet, "--kubeconfig", str(kubeconfig))

    assert "no AWS credentials found" in line


def test_neither_token_nor_kubeconfig_is_one_refusal(fleet, aws):
    assert "give --token (CLMGIT_TOKEN) or --kubeconfig" in refused(fleet)


def test_an_unreadable_kubeconfig_is_one_refusal(fleet, aws, tmp_path):
    missing = tmp_path / "missing"

    line = refused(fleet, "--kubeconfig", str(missing))

    assert f"cannot read kubeconfig {missing} (No such file or directory)" in line


def test_a_kube_auth_mode_without_its_credential_is_one_refusal(fleet, aws, tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")

    line = refused(fleet, "--kube-auth", "token", "--kubeconfig", str(kubeconfig))

    assert "--kube-auth token needs --token-file (CLMGIT_TOKEN_FILE) or --token" in line
