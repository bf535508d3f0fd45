"""Edits keep every byte they do not change; quoting styles survive."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from clmgit import yamledit
from clmgit.errors import ConfigError

TEXT = """\
# top comment
channel: beta   # trailing comment
groups:
  - name: canary          # first
    selector: {alias: "*-canary"}
    sha: '9f1b3697c6f1d2a1e0c4b7d8e9f0a1b2c3d4e5f6'
    promoted_at: 2026-11-20T10:00:00Z
  # between
  - name: default
frozen: false
"""


def test_replace_keeps_quote_style_and_comments() -> None:
    doc = yamledit.Document(TEXT, "beta.yaml")
    doc.set(["groups", 0], {"sha": "a" * 40, "promoted_at": "2026-11-22T08:00:00Z"})
    expected = TEXT.replace("9f1b3697c6f1d2a1e0c4b7d8e9f0a1b2c3d4e5f6", "a" * 40).replace(
        "2026-11-20T10:00:00Z", "2026-11-22T08:00:00Z"
    )
    assert doc.text == expected


def test_insert_goes_beside_siblings() -> None:
    doc = yamledit.Document(TEXT, "beta.yaml")
    doc.set(["groups", 1], {"sha": "1" * 40})
    assert doc.text == TEXT.replace(
        "  - name: default\n", f'  - name: default\n    sha: "{"1" * 40}"\n'
    )
    assert yaml.safe_load(doc.text)["groups"][1]["sha"] == "1" * 40  # quoted: not an int


def test_top_level_and_null_values() -> None:
    doc = yamledit.Document("channel: x\nfreeze_reason:\nfrozen: false # why\n", "x.yaml")
    doc.set([], {"frozen": True, "freeze_reason": "it's late: go home"})
    assert doc.text == 'channel: x\nfreeze_reason: "it\'s late: go home"\nfrozen: true # why\n'


def test_flow_style_falls_back_to_round_trip() -> None:
    doc = yamledit.Document("# c\ngroups: [{name: a}]\n", "x.yaml")
    doc.set(["groups", 0], {"sha": "b" * 40})
    assert yaml.safe_load(doc.text) == {"groups": [{"name": "a", "sha": "b" * 40}]}
    assert doc.text.startswith("# c\n")


def test_malformed_yaml_names_file_and_line() -> None:
    with pytest.raises(ConfigError, match=r"x.yaml: malformed YAML at line 3"):
        yamledit.load("a: 1\nb: [\n", "x.yaml")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=30))
def test_any_string_round_trips(value: str) -> None:
    doc = yamledit.Document(TEXT, "beta.yaml")
    doc.set(["groups", 0], {"promoted_from": value})
    assert yaml.safe_load(doc.text)["groups"][0]["promoted_from"] == value
    assert doc.text.startswith("# top comment\nchannel: beta   # trailing comment\n")
