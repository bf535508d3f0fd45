"""The plain reading of records (model.py's fast path for JSON-like records) comes to exactly
what the general reading gives: the same `Cluster`, or the same refusal in the same words; and
the plain host of a URL (records.py) is urlsplit's.

The general reading is forced by handing the record over as a read-only mapping view (a Mapping,
but not a dict, which the plain reading leaves alone). Records are drawn mostly plain, with odd
values mixed in: null, non-ASCII text, lone surrogates, booleans, floats, integers past int32 and
int64, lists and mappings in the wrong places, missing ids and pool names.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from hypothesis import given, settings
from hypothesis import strategies as st

from clmgit.errors import ClmgitError
from clmgit.model import Scalar, _Irregular, _plain_cluster, cluster_to_dict, parse_cluster
from clmgit.urls import url_host
from tests.helpers.hypothesis_profiles import examples

ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([-(2**31) - 1, 2**31, -(2**63) - 1, 2**63, 1.0, 3.5]),
    st.sampled_from(["", "ä", "\ud800", "x\udfffy", "日本", "\x00", "\u2028"]),
    st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
    # What the file registry's YAML loader gives for a scalar that is not a string.
    st.builds(Scalar, st.sampled_from(["", "0x1f", "1.5", "yes", "~"]),
              st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False),
                        st.integers(min_value=-(2**70), max_value=2**70))),
)
ASCII = st.text(st.characters(max_codepoint=127), max_size=8)
TEXT = st.one_of(ASCII, st.none())
NAME = ASCII.filter(bool)
INT32 = st.one_of(st.integers(-(2**31), 2**31 - 1), st.none(),
                  st.integers(-(2**31), 2**31 - 1).map(lambda i: Scalar(f"{i:#x}", i)))
INT64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.none(),
                  st.integers(-(2**63), 2**63 - 1).map(lambda i: Scalar(str(i), i)))
ITEMS = st.one_of(st.dictionaries(ASCII, ASCII, max_size=4), st.none())


def _record(required: dict[str, Any], optional: dict[str, Any]) -> Any:
    return st.fixed_dictionaries(required, optional=optional)


POOL = _record({"name": NAME}, {
    "profile": TEXT, "instance_types": st.one_of(st.lists(ASCII, max_size=3), st.none()),
    "discount_strategy": TEXT, "min_size": INT64, "max_size": INT64, "config_items": ITEMS,
})
PROBLEM = st.one_of(_record({}, {"type": TEXT, "title": TEXT, "detail": TEXT,
                                 "status": INT32, "instance": TEXT}), st.none())
STATUS = st.one_of(_record({}, {
    "current_version": TEXT, "last_version": TEXT, "next_version": TEXT,
    "problems": st.one_of(st.lists(PROBLEM, max_size=3), st.none()), "applied_at": TEXT,
}), st.none())
#: A plain record: what a registry of thousands nearly always holds.
PLAIN = _record({"id": NAME}, {
    "alias": TEXT, "infrastructure_account": TEXT, "region": TEXT, "local_id": TEXT,
    "provider": TEXT, "api_server_url": TEXT, "channel": TEXT, "environment": TEXT,
    "criticality_level": INT32, "lifecycle_status": TEXT, "owner": TEXT,
    "config_items": ITEMS, "node_pools": st.one_of(st.lists(POOL, max_size=3), st.none()),
    "status": STATUS, "cost_center": TEXT,
})
#: Fields a record may lack, where an odd value can also be put.
FIELDS = ("id", "alias", "provider", "criticality_level", "lifecycle_status", "config_items",
          "node_pools", "status", "name", "instance_types", "min_size", "max_size", "problems",
          "current_version", "type", "title", "status")


def _places(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in a record, and the fields each mapping could have."""
    found: list[tuple[Any, Any]] = []
    if isinstance(node, dict):
        found += [(node, key) for key in {*node, *FIELDS}]
        for value in node.values():
            found += _places(value)
    elif isinstance(node, list):
        found += [(node, i) for i in range(len(node))]
        for value in node:
            found += _places(value)
    return found


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    """A plain record with up to three values made odd (another type, a number out of range,
    text beyond ASCII, null where something was)."""
    raw = draw(PLAIN)
    for _ in range(draw(st.integers(0, 3))):
        places = _places(raw)
        container, key = draw(st.sampled_from(sorted(places, key=lambda p: repr(p[1]))))
        container[key] = draw(ODD)
    return raw


RECORD = records()


def read(raw: Any) -> Any:
    try:
        return parse_cluster(raw, "clusters.yaml: cluster #1")
    except ClmgitError as e:
        return f"refused: {e}"


@settings(max_examples=examples(600), deadline=None)
@given(RECORD)
def test_the_plain_reading_is_the_general_one(raw: dict[str, Any]) -> None:
    assert read(raw) == read(MappingProxyType(raw))


@settings(max_examples=examples(300), deadline=None)
@given(RECORD)
def test_a_record_written_back_reads_as_the_same_cluster(raw: dict[str, Any]) -> None:
    """What the parsed-registry cache relies on: a cluster's wire form, through JSON, reads back
    as that cluster."""
    cluster = read(raw)
    if isinstance(cluster, str):
        return
    assert read(json.loads(json.dumps(cluster_to_dict(cluster)))) == cluster


def test_a_plain_record_takes_the_plain_reading() -> None:
    raw = {
        "id": "aws:123456789012:eu-central-1:kube-1", "provider": "", "criticality_level": 2,
        "config_items": {"a": "b"}, "status": {"problems": [{"type": "t", "title": "x"}]},
        "node_pools": [{"name": "default", "instance_types": ["m5.large"], "max_size": 3}],
    }
    assert _plain_cluster(raw) == read(MappingProxyType(raw))
    # The file registry's loader: a number is a Scalar of its text and value.
    numbered = {**raw, "criticality_level": Scalar("0x2", 2)}
    assert _plain_cluster(numbered) == read(MappingProxyType(raw))
    for odd in ({"config_items": {"a": "ä"}}, {"criticality_level": True}, {"alias": 1},
                {"node_pools": [{"name": ""}]}, {"status": {"problems": [None, 1]}}):
        try:
            _plain_cluster({**raw, **odd})
        except _Irregular:
            continue
        raise AssertionError(f"{odd} took the plain reading")


def _general_host(url: str) -> str:
    try:
        return urlsplit(url).netloc.rpartition("@")[2]
    except ValueError:
        return ""


@settings(max_examples=examples(2000), deadline=None)
@given(st.sampled_from(["https://", "http://", "HTTPS://", "https:", ""]),
       st.text("ab.:/?#@[]-%_ \t\nä1é", max_size=12))
def test_the_plain_host_of_a_url_is_urlsplits(scheme: str, rest: str) -> None:
    """check_record's host (a dotted one is needed, as CLM derives the hosted zone from it)."""
    assert url_host(scheme + rest, port=True) == _general_host(scheme + rest)
