"""Random templates from a grammar of the supported constructs render identically as Go
(the evaluator) and as the converted Jinja (the project's environment)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.both import render_both
from tests.helpers.hypothesis_profiles import examples

DATA = {
    "Cluster": {
        "Name": "kube-1", "Count": 2, "On": True, "Off": False,
        "ConfigItems": {"a": "x", "b": "", "flag": "true", "n": "3"},
        "List": ["p", "q", "r"], "Empty": [], "Map": {"b": "2", "a": "1", "C": "3"},
    },
    "Values": {"zones": ["eu-1a", "eu-1b"]},
    "NodePool": {"Name": "default"},
}
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "upper": lambda s: s.upper(), "split": lambda s, sep: s.split(sep) if s else [],
    "join": lambda sep, items: sep.join(items)}

# No piece ends with `{`: Go reads `{{` as an action wherever it stands.
_TEXT = st.lists(st.sampled_from(["a", "b:", " ", "  ", "\n", "\t", "{ ", "{%", "{#", "}", "%",
                                  "#", "-", "}}", "%}", "#}", "\r\n", "\r", "\f"]),
                 max_size=6).map("".join)


def _strings(in_loop: bool) -> st.SearchStrategy[str]:
    base = ["$.Cluster.Name", "$.Cluster.ConfigItems.a", "$.Cluster.ConfigItems.b", '"lit"',
            '`raw "q"`', '"{%s}"', '(index $.Cluster.ConfigItems "n")', "$v",
            '($.Cluster.Name | upper)', '(print "a" $.Cluster.Name)']
    if in_loop:
        base += ["."]
    return st.sampled_from(base)


def _expressions(in_loop: bool) -> st.SearchStrategy[str]:
    strings = _strings(in_loop)
    return st.one_of(
        strings,
        st.sampled_from(["$.Cluster.Count", "len $.Cluster.List", "3", "$.Cluster.On",
                         "$.Cluster.Off", "not $.Cluster.On", "(eq $.Cluster.Count 2)"]),
        st.tuples(strings, strings).map(lambda p: f'printf "%s-%s" {p[0]} {p[1]}'),
        st.tuples(strings, strings).map(lambda p: f"(or {p[0]} {p[1]})"),
    )


def _conditions(in_loop: bool) -> st.SearchStrategy[str]:
    strings = _strings(in_loop)
    return st.one_of(
        strings,
        st.sampled_from(["$.Cluster.On", "$.Cluster.Off", "$.Cluster.Empty", "$.Cluster.List",
                         "lt $.Cluster.Count 3", "gt (len $.Cluster.List) 5"]),
        st.tuples(strings, strings).map(lambda p: f"eq {p[0]} {p[1]}"),
        st.tuples(strings, strings).map(lambda p: f"ne {p[0]} {p[1]}"),
        st.tuples(strings, strings).map(lambda p: f"and {p[0]} {p[1]}"),
        strings.map(lambda s: f"not {s}"),
    )


@st.composite
def _tag(draw: st.DrawFn, body: str) -> str:
    left = draw(st.sampled_from(["{{", "{{- "]))
    right = draw(st.sampled_from(["}}", " -}}"]))
    return f"{left}{body}{right}"


@st.composite
def _block(draw: st.DrawFn, depth: int, in_loop: bool) -> str:
    choices = ["text", "output", "output", "assign", "comment"]
    if depth < 3:
        choices += ["if", "range", "with"]
    kind = draw(st.sampled_from(choices))
    if kind == "text":
        return draw(_TEXT)
    if kind == "output":
        return draw(_tag(f" {draw(_expressions(in_loop))} "))
    if kind == "assign":
        return draw(_tag(f" $v = {draw(_strings(in_loop))} "))
    if kind == "comment":
        return draw(_tag("/* a note */"))
    body = draw(_blocks(depth + 1, in_loop or kind != "if"))
    if kind == "if":
        head = draw(_tag(f" if {draw(_conditions(in_loop))} "))
        middle = ""
        if draw(st.booleans()):
            middle += draw(_tag(f" else if {draw(_conditions(in_loop))} "))
            middle += draw(_blocks(depth + 1, in_loop))
        if draw(st.booleans()):
            middle += draw(_tag(" else ")) + draw(_blocks(depth + 1, in_loop))
        return head + body + middle + draw(_tag(" end "))
    if kind == "with":
        subject = draw(st.sampled_from(["$.Cluster.ConfigItems.a", "$.Cluster.ConfigItems.b",
                                        "$.Cluster.Name"]))
        orelse = draw(_tag(" else ")) + draw(_blocks(depth + 1, in_loop)) \
            if draw(st.booleans()) else ""
        return draw(_tag(f" with {subject} ")) + body + orelse + draw(_tag(" end "))
    subject = draw(st.sampled_from(["$.Cluster.List", "$.Cluster.Empty", "$.Cluster.Map",
                                    "$.Values.zones", 'split $.Cluster.ConfigItems.a ","']))
    variables = draw(st.sampled_from(["", "$e := ", "$i, $e := "]))
    if variables:
        body += draw(_tag(" $e ")) + draw(_tag(" $i ")) * ("$i" in variables)
    orelse = draw(_tag(" else ")) + draw(_blocks(depth + 1, in_loop)) \
        if draw(st.booleans()) else ""
    return draw(_tag(f" range {variables}{subject} ")) + body + orelse + draw(_tag(" end "))


def _blocks(depth: int, in_loop: bool) -> st.SearchStrategy[str]:
    return st.lists(_block(depth, in_loop), max_size=4).map("".join)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.tuples(_TEXT, _blocks(0, False)).map(lambda p: '{{ $v := "V" }}' + p[0] + p[1]))
def test_random_templates_render_identically_both_ways(template: str) -> None:
    go, jinja = render_both(template, DATA, FUNCTIONS, name="random.yaml")
    assert jinja == go, template
