"""Each template helper: its semantics (CLM's), its failures, and that templates can call it both
as a filter and as a function."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import pytest

from clmgit.config import helpers
from clmgit.config.helpers import HelperError
from clmgit.config.source import ConfigTree
from clmgit.config.templates import template_set
from clmgit.errors import TemplateError


def render(source: str, **variables: Any) -> str:
    tree = ConfigTree("sha", {"cluster/t.yaml": source.encode()})
    return template_set(tree).render("cluster/t.yaml", variables)


def test_base64_and_back() -> None:
    assert helpers.base64decode("aGVsbG8gd8O2cmxk") == "hello wörld"
    assert helpers.base64decode("aGVs\nbG8=\n") == "hello"  # line breaks are ignored
    assert render("{{ 'x' | base64 }} {{ base64decode('eA==') }}") == "eA== x"


@pytest.mark.parametrize("bad", ["aGVsbG8", "!!!!", "/w=="])  # no padding, junk, not UTF-8
def test_base64decode_refuses_what_is_not_base64_text(bad: str) -> None:
    with pytest.raises(HelperError, match="base64decode"):
        helpers.base64decode(bad)


def test_sha256_is_hex_of_utf8() -> None:
    assert render("{{ sha256('ü') }}") == hashlib.sha256("ü".encode()).hexdigest()


def test_helpers_want_strings() -> None:
    with pytest.raises(HelperError, match="az_id expects a string, not int"):
        helpers.az_id(1)  # type: ignore[arg-type]  # a wrong type on purpose


def test_account_id() -> None:
    assert helpers.account_id("aws:123456789012") == "123456789012"
    assert render("{{ cluster.infrastructure_account | account_id }}",
                  cluster={"infrastructure_account": "aws:42"}) == "42"
    for bad in ("123456789012", "aws:1:2"):
        with pytest.raises(HelperError, match="type:id"):
            helpers.account_id(bad)


def test_az_id_and_az_count() -> None:
    assert helpers.az_id("eu-central-1c") == "1c"
    assert helpers.az_id("local") == "local"
    subnets = {"*": "s-a,s-b", "eu-central-1a": "s-a", "eu-central-1b": "s-b"}
    assert helpers.az_count(subnets) == 2
    assert render("{{ az_count(s) }}", s=subnets) == "2"
    with pytest.raises(HelperError, match="mapping"):
        helpers.az_count(["eu-central-1a"])  # type: ignore[arg-type]  # a wrong type on purpose


def test_asg_size() -> None:
    assert helpers.asg_size(6, 3) == 2
    assert render("{{ asg_size(9, 3) }}") == "3"
    with pytest.raises(HelperError, match="not an exact multiple of 4"):
        helpers.asg_size(6, 4)
    with pytest.raises(HelperError, match="not an exact multiple of 0"):
        helpers.asg_size(6, 0)
    with pytest.raises(HelperError, match="whole number"):
        helpers.asg_size("6", 3)  # type: ignore[arg-type]  # a wrong type on purpose


def test_parse_int64() -> None:
    assert helpers.parse_int64("42") == 42
    assert helpers.parse_int64("-9223372036854775808") == -(2**63)
    assert helpers.parse_int64("+7") == 7
    assert render("{{ parse_int64('10') + 1 }}") == "11"
    for bad in ("9223372036854775808", "1_000", " 1", "1.0", "0x10", ""):
        with pytest.raises(HelperError, match="not a 64-bit integer"):
            helpers.parse_int64(bad)


@pytest.mark.parametrize(("quantities", "total"), [
    (["100m", "200m"], "300m"),
    (["1Gi", "512Mi"], "1536Mi"),
    (["1", "500m"], "1500m"),
    (["1.5"], "1500m"),
    (["1500m", "500m"], "2"),
    (["2000"], "2k"),
    (["1Ki", "1"], "1025"),  # binary, but not a multiple of 1024
    (["512"], "512"),
    (["0.5Gi"], "512Mi"),
    (["1e3"], "1e3"),
    (["0", "1Gi"], "1Gi"),  # the first non-zero addend sets the notation
    (["100m", "1Gi"], "1073741824100m"),
    (["0.5n"], "1n"),  # rounded up to a whole nano unit
    (["-100m"], "-100m"),
    ([], "0"),
])
def test_sum_quantities(quantities: list[str], total: str) -> None:
    assert helpers.sum_quantities(*quantities) == total


def test_sum_quantities_takes_a_list_in_templates() -> None:
    assert render("{{ ['1Gi', '1Gi'] | sum_quantities }}") == "2Gi"
    assert render("{{ sum_quantities('1', '2') }}") == "3"


@pytest.mark.parametrize("bad", ["1K", "abc", "1.2.3", "", " 1", "1Gib", "."])
def test_sum_quantities_refuses_what_kubernetes_refuses(bad: str) -> None:
    with pytest.raises(HelperError, match="not a Kubernetes quantity"):
        helpers.sum_quantities(bad)


@pytest.mark.parametrize(("quantity", "factor", "scaled"), [
    ("100m", 2, "200m"),
    ("250m", 1.1, "275m"),  # computed in single precision, then truncated
    ("3", 0.1, "300m"),  # small decimal amounts scale in milli units
    ("1Gi", 0.5, "512Mi"),
    ("1Gi", 1.5, "1536Mi"),
    ("2000", 0.5, "1k"),  # 1024 and more scale in whole units
    ("1Mi", 0.3, "314572"),
])
def test_scale_quantity(quantity: str, factor: float, scaled: str) -> None:
    assert helpers.scale_quantity(quantity, factor) == scaled


def test_scale_quantity_refuses_factors_of_zero_and_less() -> None:
    for factor in (0, -1.5):
        with pytest.raises(HelperError, match="greater than 0"):
            helpers.scale_quantity("1Gi", factor)
    with pytest.raises(HelperError, match="must be a number"):
        helpers.scale_quantity("1Gi", "2")  # type: ignore[arg-type]  # a wrong type on purpose
    assert render("{{ '1Gi' | scale_quantity(2) }}") == "2Gi"


@dataclass(frozen=True)
class Pool:
    name: str
    sizes: tuple[int, ...]


def test_to_yaml_and_to_json_sort_keys_and_take_dataclasses() -> None:
    value = {"b": [1, "x"], "a": Pool("p", (1, 2))}
    assert helpers.to_json(value) == '{"a": {"name": "p", "sizes": [1, 2]}, "b": [1, "x"]}'
    assert helpers.to_yaml(value) == "a:\n  name: p\n  sizes:\n  - 1\n  - 2\nb:\n- 1\n- x"
    assert helpers.to_yaml("plain") == "plain"
    assert render("{{ {'k': 'ü'} | to_json }}|{{ to_json([1], indent=1) }}") == (
        '{"k": "ü"}|[\n 1\n]')
    assert render("x:\n  {{ {'a': {'b': 1}} | to_yaml | indent(2) }}\n") == "x:\n  a:\n    b: 1\n"


def test_to_json_of_an_undefined_value_fails() -> None:
    with pytest.raises(TemplateError, match="'nope' is undefined"):
        render("{{ to_json(nope) }}")
    with pytest.raises(HelperError, match="cannot convert a set"):
        helpers.to_json({1, 2})
