"""clusters.yaml as read (every scalar with its text and YAML 1.1 value) is cached by content as
JSON: what the cache gives back is what the YAML gives."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clmgit.model import Scalar
from clmgit.registry.records import _dump, _load, load_written, parse_file

ODD = b"""\
clusters:
- id: aws:123456789012:eu-central-1:c1
  kubernetes_version: 1.20
  mode: 0755
  flag: yes
  when: 2024-01-02
  stamp: 2024-01-02T03:04:05Z
  sexagesimal: 1:30
  nothing: ~
  ratio: .5
  big: 123456789012345678901
  yes: on
  1: one
  node_pools: [a, "b", 'c']
  "\\0": odd key
"""


def same(a: Any, b: Any) -> bool:
    if isinstance(a, Scalar) or isinstance(b, Scalar):
        return (type(a), str(a), type(a.resolved), a.resolved) == (
            type(b), str(b), type(b.resolved), b.resolved)
    if isinstance(a, dict):
        return isinstance(b, dict) and len(a) == len(b) and all(
            same(ka, kb) and same(a[ka], b[kb]) for ka, kb in zip(a, b, strict=True))
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    return a == b


def test_the_cached_form_reads_back_as_the_yaml() -> None:
    read = load_written(ODD, "clusters.yaml")
    assert same(_load(json.loads(json.dumps(_dump(read)))), read)
    assert not same(_load(json.loads(json.dumps(_dump(read)))),
                    load_written(ODD.replace(b"0755", b"493"), "clusters.yaml"))


def test_a_registry_parses_the_same_from_the_cache(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                     fleet) -> None:
    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(tmp_path / "cache"))
    text = (fleet.path / "clusters.yaml").read_bytes()
    cold = parse_file(text, "clusters.yaml")
    assert list((tmp_path / "cache" / "yaml").glob("*.json"))  # written
    assert parse_file(text, "clusters.yaml") == cold
