"""The fast YAML loader gives exactly what `yaml.safe_load_all` gives, and names file and line."""

from __future__ import annotations

import datetime
import math
from typing import Any

import pytest
import yaml

from clmgit.config import yamlfiles
from clmgit.errors import ConfigError

CASES = [
    "",
    "---\n---\n",
    "a: 1\n---\n# only a comment\n---\nb: [x]\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, labels: {a: 'b'}}\ndata:\n  k: |\n"
    "    multi\n    line\n",
    "a: [1.5, .inf, -.Inf, 0x1F, 0o17, 017, 1_000, '1_000', 1:30, +5, -0, 1e3, 6.8523015e+5]\n",
    "a: [yes, No, on, OFF, y, n, ~, null, Null, '', \"\", 'true', '3', \"null\"]\n",
    "a: [!!str 3, !!int '3', !!float '2', !!bool 'yes', !!null '']\n",
    "1: int key\n2.5: float key\nnull: null key\ntrue: bool key\n",
    "a: &x [1, 2]\nb: *x\n",  # an alias: one shared list, as PyYAML builds it
    "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",  # a merge key
    "=: value key\n",
    "when: 2001-12-14\nstamp: 2001-12-14t21:59:43.10-05:00\n",
    "blob: !!binary aGVsbG8=\n",
    "- !!set {a, b}\n- !!omap [a: 1, b: 2]\n- !!pairs [a: 1]\n",
    "a: b\nempty:\nlist:\n- \n- x\n",
    "duplicate: 1\nduplicate: 2\n",
]


def same(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down (1 == 1.0 == True is not good enough)."""
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@pytest.mark.parametrize("text", CASES)
def test_documents_are_what_safe_load_all_gives(text: str) -> None:
    expected = list(yaml.load_all(text, Loader=yaml.SafeLoader))
    assert same(yamlfiles.load_all(text, "f.yaml"), expected)


def test_aliases_stay_shared_and_recursion_works() -> None:
    (doc,) = yamlfiles.load_all("a: &x [1]\nb: *x\nc: &r {self: *r}\n", "f.yaml")
    assert doc["a"] is doc["b"]
    assert doc["c"]["self"] is doc["c"]
    assert isinstance(yamlfiles.load_all("d: 2001-12-14\n", "f")[0]["d"], datetime.date)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("a: 1\nb: [\n", "f.yaml:3"),
        ("a: b: c\n", "f.yaml:1"),
        ("a: *nowhere\n", "f.yaml:1"),
        ("? [1]\n: unhashable key\n", "f.yaml"),
        ("a: !Ref Foo\n", "f.yaml"),
    ],
)
def test_malformed_yaml_names_file_and_line(text: str, where: str) -> None:
    with pytest.raises(ConfigError, match=f"^{where}.*: the rendered YAML is malformed"):
        yamlfiles.load_all(text, "f.yaml")
    with pytest.raises(yaml.YAMLError):
        list(yaml.load_all(text, Loader=yaml.SafeLoader))


def test_compose_keeps_the_text_and_resolves_tags() -> None:
    node = yamlfiles.compose("a: 1.10\nb: ~\nc: '3'\n", "f.yaml")
    assert isinstance(node, yaml.MappingNode)
    tags = {k.value: (v.value, v.tag.rsplit(":", 1)[1]) for k, v in node.value}
    assert tags == {"a": ("1.10", "float"), "b": ("~", "null"), "c": ("3", "str")}
    assert yamlfiles.compose("", "f.yaml") is None
    with pytest.raises(ConfigError, match="f.yaml"):
        yamlfiles.compose("a: 1\n---\nb: 2\n", "f.yaml")


class _PyYAMLTemplateLoader(yaml.SafeLoader):
    """The reference: PyYAML's own loader with CloudFormation's short forms as long forms."""


def _reference_short_form(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]  # a MappingNode: the kind left
    return {suffix if suffix in ("Ref", "Condition") else f"Fn::{suffix}": value}


_PyYAMLTemplateLoader.add_multi_constructor("!", _reference_short_form)

TEMPLATES = [
    "Resources:\n  A: {Type: T1, Properties: {X: !Ref B, Y: !GetAtt B.Arn, Z: !GetAtt [B, Id]}}\n",
    "Resources:\n  A:\n    Properties:\n      N: !Sub '${AWS::StackName}-x'\n"
    "      L: !Join ['', [a, !Ref B]]\n      M: !If [C, !Ref D, !Ref 'AWS::NoValue']\n"
    "      S: !Select [0, !GetAZs '']\n      T: !Sub\n        - '${X}'\n        - {X: !Ref Y}\n",
    "Conditions:\n  C: !Equals [!Ref Env, production]\n  D: !Not [!Condition C]\n",
    # anchors and merge keys go through PyYAML's constructor, short forms included
    "Resources:\n  A: &a {Type: T1, Properties: {X: !Ref B}}\n  B: *a\n"
    "  C: {<<: *a, Type: T3}\n",
    '{"Resources": {"A": {"Type": "T1", "Properties": {"X": {"Ref": "B"}}}}}',
    "Outputs:\n  V: {Value: 1.5, Export: {Name: !Sub 'x-${AWS::Region}'}}\n  N: {Value: ~}\n",
]


@pytest.mark.parametrize("text", TEMPLATES)
def test_templates_load_as_pyyaml_loads_them_with_short_forms(text: str) -> None:
    assert yamlfiles.load_template(text, "t") == yaml.load(text, Loader=_PyYAMLTemplateLoader)


@pytest.mark.parametrize("text", [
    "a: 1\nb: [x, {c: d}]\n", "", "x: !Ref y\nz: !GetAtt [a, b]\n", "a: 'Loading...'\n",
    "a: [1\n", "a: b: c\n", "- a\nb: 1\n", "a: !e!x 1\n", "a:\n\tb: 1\n",
    # what only the composer finds: a second document, an undefined or repeated anchor
    "a: 1\n---\nb: 2\n", "a: *x\n", "a: &x 1\nb: &x 2\n", "a: &x 1\nb: *x\n",
])
def test_check_accepts_and_refuses_what_compose_does(text: str) -> None:
    def outcome(check: Any) -> str:
        try:
            check(text, "f.yaml")
        except ConfigError as e:
            return str(e)
        return "accepted"

    assert outcome(yamlfiles.check) == outcome(yamlfiles.compose)
