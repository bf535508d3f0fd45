"""The real `KubeClient` against the emulator: reaching a cluster, discovery, eviction."""

from __future__ import annotations

from pathlib import Path

import pytest
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubeapi.fixtures import make_crd, make_pdb, make_pod

from clmgit.adapters.kube import KubeAPI, connect
from clmgit.engine.kube import PODS
from clmgit.errors import ConfigError
from clmgit.model import Cluster


def test_connect_by_context_named_after_the_id_or_alias_or_by_token(
    server: KubeAPIServer, tmp_path: Path
) -> None:
    path = server.write_kubeconfig(tmp_path / "kc", context_names=["other", "my-alias"])
    cluster = Cluster(id="aws:1:eu:c1", alias="my-alias", api_server_url=server.http_url)

    assert connect(cluster, kubeconfig=str(path)).resolve("pod") == PODS
    assert connect(cluster, token=server.token).resolve("Pod") == PODS
    with pytest.raises(ConfigError, match="no context named 'aws:1:eu:c2'") as e:
        connect(Cluster(id="aws:1:eu:c2"), kubeconfig=str(path))
    assert server.token not in str(e.value)


def test_refused_credentials_name_the_context_and_the_server(
    server: KubeAPIServer, tmp_path: Path
) -> None:
    """An expired token must say which kubeconfig context and which server refused it."""
    from clmgit.errors import ApplyError

    path = server.write_kubeconfig(tmp_path / "kc", context_names=["my-alias"])
    path.write_text(path.read_text().replace(server.token, "expired-token"))
    cluster = Cluster(id="aws:1:eu:c1", alias="my-alias", api_server_url=server.http_url)
    with pytest.raises(ApplyError) as e:
        connect(cluster, kubeconfig=str(path)).resolve("pod")
    assert "401" in str(e.value) and "context 'my-alias'" in str(e.value)
    assert str(path) in str(e.value) and "expired-token" not in str(e.value)
    with pytest.raises(ApplyError, match=f"--token at {server.http_url}"):
        connect(cluster, token="expired-token").resolve("pod")


def test_a_kind_served_after_its_crd_is_applied_is_found(kube: KubeAPI) -> None:
    assert kube.resolve("Widget") is None
    kube.apply(make_crd("example.org", "Widget"))
    found = kube.resolve("widgets")
    assert found is not None and (found.api_version, found.namespaced) == ("example.org/v1", True)


def test_an_eviction_a_budget_refuses_is_false_and_the_pod_stays(
    kube: KubeAPI, server: KubeAPIServer
) -> None:
    server.seed(make_pod("a", labels={"app": "a"}), make_pod("b", labels={"app": "b"}),
                make_pdb("a", match_labels={"app": "a"}, min_available=1))

    assert kube.evict("default", "a") is False
    assert kube.evict("default", "b") is True
    assert kube.evict("default", "gone") is True
    assert [p["metadata"]["name"] for p in kube.list(PODS, namespace="default")] == ["a"]
