"""clusters.yaml as read: strings as themselves, every other scalar with its text and YAML 1.1
value, the common nodes built by clmgit's own walk exactly as PyYAML's constructors build them.
The records as checked are cached by content and by the code that read them: what comes back is
what was read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from clmgit.errors import RegistryError
from clmgit.model import Scalar
from clmgit.registry import records
from clmgit.registry.records import load_written, parse_file

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


#: Nodes the walk leaves to the constructors: merge and value keys, tags of their own, aliases,
#: keys that are numbers, null or booleans, duplicate keys, binary text.
TAGGED = b"""\
base: &base {region: eu-central-1, size: 3, on: yes, 1.5: x}
clusters:
- <<: *base
  id: aws:123456789012:eu-central-1:c1
  set: !!set {a, 1}
  pairs: !!omap [{a: 1}, {b: ~}]
  text: !!binary aGVsbG8=
  number: !!str 123
  list: &list [1, two, ~, 2024-01-02, {k: v}]
  again: *list
  map: !!map {=: value, ~: null key, true: t}
  id: twice
- {<<: [*base], region: us-east-1}
"""


def constructed(text: bytes) -> Any:
    """The document as PyYAML's constructors build it with the registry's loader."""
    loader = records._WrittenLoader(text)
    try:
        return loader.construct_document(loader.get_single_node())
    finally:
        loader.dispose()


@pytest.mark.parametrize("text", [ODD, TAGGED, b"[a, 1, ~]", b"plain 1", b"{? [a]: 1}"])
def test_the_walk_builds_what_the_constructors_build(text: bytes) -> None:
    try:
        expected = constructed(text)
    except yaml.YAMLError:
        with pytest.raises(RegistryError, match="malformed YAML at line 1"):
            load_written(text, "clusters.yaml")
        return
    read = load_written(text, "clusters.yaml")
    assert same(read, expected)
    assert not same(read, constructed(text.replace(b"1", b"2")))


def test_strings_are_str_and_other_scalars_keep_their_text() -> None:
    read = load_written(ODD, "clusters.yaml")["clusters"][0]
    assert type(read["id"]) is str and type(read["node_pools"][1]) is str
    assert (read["mode"], read["mode"].resolved) == ("0755", 493)
    assert (read["nothing"], read["nothing"].resolved) == ("", None)


def test_a_registry_parses_the_same_from_the_cache(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                     fleet) -> None:
    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(tmp_path / "cache"))
    text = (fleet.path / "clusters.yaml").read_bytes()
    cold = parse_file(text, "clusters.yaml")
    assert entries(tmp_path / "cache")  # written
    assert parse_file(text, "clusters.yaml") == cold


#: Records that take the general reading back from the cache too: text beyond ASCII, YAML 1.1
#: scalars kept as written, nulls, no provider or lifecycle, a Karpenter pool, problems.
WRITTEN = """\
clusters:
- id: aws:123456789012:eu-central-1:kube-1
  alias: kübe
  api_server_url: https://kube-1.example.org
  channel: 1.20
  environment: yes
  criticality_level: 2.9
  config_items: {mode: 0755, when: 2024-01-02, nothing: ~, text: "naïve"}
  node_pools:
  - {name: default, profile: worker-splitaz, instance_types: [m5.large], max_size: 3}
  - {name: karpenter, profile: worker-karpenter, discount_strategy: ~}
  status:
    current_version: abc#def
    problems: [{type: t, title: x, status: 500, instance: /i}]
- id: aws:123456789012:eu-central-1:kube-2
  provider: zalando-eks
  lifecycle_status: decommission-requested
"""


def entries(cache: Path) -> set[Path]:
    return set((cache / "yaml").glob("*.json")) | set((cache / "yaml").glob("*.pickle"))


def test_the_checked_records_are_cached_and_read_back_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(tmp_path))
    cold = parse_file(WRITTEN, "clusters.yaml")
    assert [c.alias for c in cold] == ["kübe", ""]
    assert cold[0].config_items["mode"] == "0755" and cold[0].criticality_level == 2
    written = entries(tmp_path)
    assert len(written) == 1  # the records as checked
    monkeypatch.setattr(yaml, "load", None)  # a read from the cache parses no YAML
    assert parse_file(WRITTEN, "clusters.yaml") == cold
    assert entries(tmp_path) == written


def test_a_damaged_entry_is_read_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(tmp_path))
    cold = parse_file(WRITTEN, "clusters.yaml")
    for entry in entries(tmp_path):
        entry.write_text('[{"id": 1}]')
    assert parse_file(WRITTEN, "clusters.yaml") == cold


def test_another_version_of_the_code_reads_the_file_anew(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(tmp_path))
    cold = parse_file(WRITTEN, "clusters.yaml")
    before = entries(tmp_path)
    monkeypatch.setattr(records, "_code_version", lambda: "another")
    assert parse_file(WRITTEN, "clusters.yaml") == cold
    assert len(entries(tmp_path) - before) == 1  # its own records entry


def test_a_refused_registry_is_refused_again(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(tmp_path))
    refused = WRITTEN.replace("instance_types: [m5.large], ", "")
    for _ in range(2):
        with pytest.raises(RegistryError, match="no instance types for cluster .*kube-1, pool "
                                                "default"):
            parse_file(refused, "clusters.yaml")


def test_records_read_from_the_cache_share_values_and_keep_their_hash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pickled records: equal strings are one object (a fleet repeats them thousands of
    times) and each record's version hash comes back computed, equal to a fresh one."""
    from dataclasses import replace

    from clmgit.model import cluster_hash

    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(tmp_path))
    text = "clusters:\n" + "".join(
        f"- {{id: 'aws:123456789012:eu-central-1:c{i}', region: eu-central-1, local_id: c{i},"
        f" api_server_url: 'https://c{i}.example.org', infrastructure_account: "
        f"'aws:12345678901{i}'}}\n" for i in range(2))
    cold = parse_file(text, "clusters.yaml")
    warm = parse_file(text, "clusters.yaml")
    assert warm == cold and warm[0].region is warm[1].region
    assert "version_hash" in vars(warm[1])  # loaded, not computed again
    assert warm[1].version_hash == cluster_hash(replace(warm[1])) == cold[1].version_hash


def test_a_date_that_is_none_is_refused_in_one_sentence(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_CACHE_DIR", str(tmp_path))
    text = WRITTEN.replace("when: 2024-01-02", "when: 2024-13-45")
    with pytest.raises(RegistryError, match=r"^clusters.yaml: malformed YAML at line 8$"):
        parse_file(text, "clusters.yaml")
