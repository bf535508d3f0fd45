"""Fixtures shared by every test directory: moto in server mode (one per test session) and the
Kubernetes API emulator (one per test), reached through boto3 and the official client only."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.dynamic import DynamicClient

from clmgit.sandbox.aws import moto_server
from clmgit.sandbox.kubeapi import KubeAPIServer

CONTEXT = "sandbox"


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """moto on 127.0.0.1 and a free port for the whole session; `AWS_ENDPOINT_URL` and throw-away
    credentials point boto3 at it. Tests keep apart by giving their clusters unique ids."""
    with moto_server() as endpoint:
        yield endpoint


@pytest.fixture
def kube_server() -> Iterator[KubeAPIServer]:
    """A fresh emulator on a free port of 127.0.0.1, stopped after the test."""
    with KubeAPIServer() as server:
        yield server


@pytest.fixture
def kubeconfig(kube_server: KubeAPIServer, tmp_path: Path) -> Path:
    return kube_server.write_kubeconfig(tmp_path / "kubeconfig", context_names=[CONTEXT])


@pytest.fixture
def api_client(kubeconfig: Path) -> Iterator[client.ApiClient]:
    api = config.new_client_from_config(str(kubeconfig), context=CONTEXT)
    yield api
    api.close()


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


@pytest.fixture
def policy(api_client: client.ApiClient) -> client.PolicyV1Api:
    return client.PolicyV1Api(api_client)


@pytest.fixture
def dynamic(api_client: client.ApiClient, tmp_path: Path) -> DynamicClient:
    # A discovery cache of its own: the default one is shared by host:port across runs.
    return DynamicClient(api_client, cache_file=str(tmp_path / "discovery.json"))


RawCall = Callable[..., tuple[int, Any]]


@pytest.fixture
def raw_call(api_client: client.ApiClient) -> RawCall:
    """A call through the official client's own request machinery (auth included), for bodies and
    paths the generated APIs cannot express; returns (HTTP status, decoded body) without raising."""

    def call(
        method: str, path: str, *, body: Any = None, content_type: str | None = None,
        accept: str = "application/json",
    ) -> tuple[int, Any]:
        headers = {"Accept": accept}
        if content_type:
            headers["Content-Type"] = content_type
        request = api_client.param_serialize(
            method, path, header_params=headers, body=body, auth_settings=["BearerToken"]
        )
        response = api_client.call_api(*request)
        response.read()
        text = response.data.decode()
        return response.status, json.loads(text) if text.startswith("{") else text

    return call


def all_stacks(cloudformation: Any) -> list[dict[str, Any]]:
    """Every stack DescribeStacks lists, all pages: moto pages at 50, and a suite that has made
    more would otherwise see only the first 50 (and an `assert not exists` could not fail)."""
    pages = cloudformation.get_paginator("describe_stacks").paginate()
    return [stack for page in pages for stack in page["Stacks"]]


def all_groups(autoscaling: Any) -> list[dict[str, Any]]:
    """Every Auto Scaling group, all pages (50 a page: a long session has more)."""
    pages = autoscaling.get_paginator("describe_auto_scaling_groups").paginate()
    return [group for page in pages for group in page["AutoScalingGroups"]]
