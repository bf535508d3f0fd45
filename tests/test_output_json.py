"""The JSON that `-o json` writes is json's own `indent=2` text, byte for byte, however it is
built (clmgit/cli/output.py:indented_json)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from clmgit.cli.output import Format, emit, indented_json

# Strings with what could be taken for the joints of records: braces, commas, line breaks.
TEXT = st.text(alphabet=st.sampled_from(list('ab{},:[]"\\\n\t é\u2028')), max_size=8)
SCALARS = (st.none() | st.booleans() | st.integers() | TEXT
           | st.floats(allow_nan=True, allow_infinity=True))
KEYS = TEXT | st.integers() | st.none()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(KEYS, inner, max_size=4), max_leaves=20)
RECORDS = st.lists(st.dictionaries(TEXT, SCALARS, max_size=5), max_size=5)


def same(value: Any) -> None:
    assert indented_json(value) == json.dumps(value, indent=2)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_any_value_is_written_as_json_indents_it(value: Any) -> None:
    same(value)


@settings(max_examples=300, deadline=None)
@given(RECORDS, VALUES)
def test_lists_of_flat_records_in_an_envelope(records: list[dict[str, Any]],
                                               summary: Any) -> None:
    same(records)
    same({"apiVersion": "clmgit/v1", "items": records, "summary": summary, "errors": []})
    same([records, tuple(records)])


def test_the_shapes_that_take_the_short_ways() -> None:
    value: Any
    for value in ({}, [], [{}], [{}, {"a": 1}], [{"a": "},\n    {"}, {"b": None}],
                  {"items": ({"a": 1}, {"a": 2})}, {1: {"x": [1]}, "y": []}):
        same(value)


def test_a_record_given_twice_is_written_twice_in_yaml(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """to_data passes a dict that already is data on as it is, so one record may stand twice
    in a document: YAML writes it out twice, never as an anchor and an alias."""
    record = {"id": "c1", "state": "in-sync"}
    emit([record, record], Format.yaml, kind="ClusterStatusList")
    out = capsys.readouterr().out
    assert "&" not in out and "*" not in out
    assert yaml.safe_load(out)["items"] == [record, record]
