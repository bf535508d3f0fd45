"""A URL's host, one definition (clmgit/urls.py): the API server's and a forge's."""

from __future__ import annotations

import pytest

from clmgit.urls import url_host


@pytest.mark.parametrize(("url", "host", "go_host"), [
    ("https://kube-1.example.org", "kube-1.example.org", "kube-1.example.org"),
    ("https://Kube-1.Example.org:8443/path", "kube-1.example.org", "Kube-1.Example.org:8443"),
    ("https://user@kube-1.example.org/", "kube-1.example.org", "kube-1.example.org"),
    ("https://[::1]:443/", "::1", "[::1]:443"),
    ("https://[::1/", "", ""),  # does not parse
    ("kube-1", "", ""),
    ("", "", ""),
])
def test_the_host_of_a_url(url: str, host: str, go_host: str) -> None:
    assert url_host(url) == host
    assert url_host(url, port=True) == go_host
