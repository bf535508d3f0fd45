"""The Jinja emitter: readable output, whitespace kept, refusals naming file, line, construct."""

from __future__ import annotations

import pytest

from clmgit.convert.emitter import Refused, to_jinja
from clmgit.convert.parser import parse
from tests.helpers.both import render_both


def jinja(source: str) -> str:
    return to_jinja(parse(source, "cluster/x.yaml"))


def test_fields_of_clm_data_become_variables_and_markers_stay() -> None:
    assert jinja("a: {{- .Cluster.ConfigItems.x }}\n") == "a: {{- Cluster.ConfigItems.x }}\n"
    assert jinja('{{ if eq .Cluster.Alias "x" }}y{{ end }}') == \
        '{% if (Cluster.Alias == "x") %}y{% endif %}'


def test_text_that_jinja_would_read_as_a_tag_is_escaped() -> None:
    source = "echo ${#arr} {%x%}"
    go, converted = render_both(source, {}, {})
    assert converted == go == source


@pytest.mark.parametrize(("source", "construct"), [
    ("a\n{{ range .L }}{{ break }}{{ end }}", "{{break}}"),
    ('{{ html "x" }}', "the builtin html"),
    ('{{ printf "%e" 1 }}', "printf with the verb %e"),
    ('{{ printf "%+v" 1 }}', "printf with the directive %+v"),
    ("{{ printf .Cluster.Alias 1 }}", "printf with a format that is not a string constant"),
    ("{{ . }}", "printing the template's data"),
    ('{{ if .A }}{{ else with .B }}{{ end }}', "{{else with}}"),
])
def test_what_jinja_cannot_express_is_refused_with_file_line_and_construct(
        source: str, construct: str) -> None:
    with pytest.raises(Refused) as raised:
        jinja(source)
    assert str(raised.value).startswith("cluster/x.yaml:")
    assert construct in str(raised.value)


def test_a_define_used_before_it_stands_is_moved_first() -> None:
    source = '{{ template "t" .Cluster }}\n{{ define "t" }}[{{ .Name }}]{{ end }}\ntail'
    go, converted = render_both(source, {"Cluster": {"Name": "n"}}, {})
    assert converted == go == "[n]\n\ntail"


def test_a_variable_assigned_in_a_loop_keeps_its_value_after_it() -> None:
    source = ('{{ $s := "" }}{{ range .L }}{{ if $s }}{{ $s = printf "%s, " $s }}{{ end }}'
              '{{ $s = printf "%s%s" $s . }}{{ end }}[{{ $s }}]')
    go, converted = render_both(source, {"L": ["a", "b"]}, {})
    assert converted == go == "[a, b]"


@pytest.mark.parametrize(("source", "expected"), [
    ('{{ index .Cluster.ConfigItems "missing" }}|{{ if index .Cluster.ConfigItems "x" }}y{{ end }}',
     "|"),  # Go's zero value of a map of strings; Jinja's subscript would be undefined
    ('{{ index .Cluster.ConfigItems "x" }}{{ index .Cluster.Zones 1 }}', "b"),
    ('{{ len "héllo" }} {{ len .Cluster.Zones }} {{ len .Cluster.ConfigItems }}', "6 2 1"),
])
def test_index_and_len_as_go_computes_them(source: str, expected: str) -> None:
    data = {"Cluster": {"ConfigItems": {"x": ""}, "Zones": ["a", "b"]}}
    go, converted = render_both(source, data, {})
    assert converted == go == expected
