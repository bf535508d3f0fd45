"""The Go-template evaluator on its own: Go's documented semantics."""

from __future__ import annotations

import pytest

from clmgit.convert.evaluator import render
from clmgit.convert.parser import GoTemplateError, parse


def go(source: str, data: object = None, *, functions: dict | None = None) -> str:
    return render(parse(source, "t.yaml"), data, functions or {})


@pytest.mark.parametrize(("value", "expected"), [
    (False, "no"), (True, "yes"), (0, "no"), (7, "yes"), (0.0, "no"), ("", "no"), ("x", "yes"),
    ([], "no"), ([0], "yes"), ({}, "no"), ({"a": 1}, "yes"), (None, "no"),
])
def test_truth_follows_go(value: object, expected: str) -> None:
    assert go("{{ if .V }}yes{{ else }}no{{ end }}", {"V": value}) == expected


def test_range_over_a_map_visits_sorted_keys() -> None:
    data = {"M": {"b": 2, "a": 1, "C": 3}}
    assert go("{{ range $k, $v := .M }}{{ $k }}={{ $v }};{{ end }}", data) == "C=3;a=1;b=2;"
    assert go("{{ range .M }}{{ . }}{{ end }}", data) == "312"


def test_range_over_a_list_with_index_and_else() -> None:
    source = "{{ range $i, $e := .L }}{{ $i }}:{{ $e }} {{ end }}"
    assert go(source, {"L": ["x", "y"]}) == "0:x 1:y "
    assert go("{{ range .L }}x{{ else }}empty{{ end }}", {"L": []}) == "empty"
    assert go("{{ range .L }}x{{ else }}nil{{ end }}", {"L": None}) == "nil"


def test_what_convert_refuses_fails() -> None:
    with pytest.raises(GoTemplateError, match=r"t.yaml:1: \{\{break\}\} is not rendered"):
        go("{{ range .L }}{{ break }}{{ end }}", {"L": [1]})
    with pytest.raises(GoTemplateError, match='function "html" not defined'):
        go('{{ html "x" }}')


def test_missing_key_is_an_error_as_clm_configures_it() -> None:
    with pytest.raises(GoTemplateError, match=r't.yaml:1: map has no entry for key "nope"'):
        go("{{ .Cluster.nope }}", {"Cluster": {}})


def test_index_of_a_missing_key_is_the_zero_value() -> None:
    assert go('[{{ index .M "x" }}]', {"M": {"a": "b"}}) == "[]"
    assert go('{{ index .L 1 }}', {"L": ["a", "b"]}) == "b"
    with pytest.raises(GoTemplateError, match="index out of range"):
        go('{{ index .L 5 }}', {"L": ["a"]})


@pytest.mark.parametrize(("source", "expected"), [
    ('{{ printf "%s-%s" "a" "b" }}', "a-b"),
    ('{{ printf "%d items" 3 }}', "3 items"),
    ('{{ printf "%05d|%-4s|%x|%q|%v|%t" 42 "ab" 255 "q\\"" 1.5 true }}',
     '00042|ab  |ff|"q\\""|1.5|true'),
    ('{{ printf "%s" 3 }}', "%!s(int=3)"),
    ('{{ printf "%s %s" "a" }}', "a %!s(MISSING)"),
    ('{{ printf "%%" }}', "%"),
    ("{{ printf `%s, ` \"x\" }}", "x, "),
])
def test_printf_verbs(source: str, expected: str) -> None:
    assert go(source) == expected


@pytest.mark.parametrize(("source", "expected"), [
    ("{{ true }} {{ false }}", "true false"), ("{{ 1e6 }}", "1e+06"), ("{{ 0.5 }}", "0.5"),
    ("{{ 3.0 }}", "3"), ("{{ 1e21 }}", "1e+21"), ("{{ 'a' }}", "97"), ("{{ 0x1F }}", "31"),
    ('{{ print "a" 1 2 "b" }}', "a1 2b"), ('{{ println 1 "x" }}', "1 x\n"),
])
def test_values_print_as_go_prints_them(source: str, expected: str) -> None:
    assert go(source) == expected


def test_lists_and_maps_print_as_go_prints_them() -> None:
    data = {"L": ["a", 1], "M": {"b": 1, "a": True}}
    assert go("{{ .L }} {{ .M }}", data) == "[a 1] map[a:true b:1]"


def test_trim_markers_remove_spaces_tabs_and_newlines_only() -> None:
    assert go("a \t\n {{- 1 -}} \n b") == "a1b"
    assert go("a\f {{- 1 }}") == "a\f1"
    assert go("x {{- /* note */ -}} y") == "xy"


def test_variables_are_scoped_and_assignable() -> None:
    source = ("{{ $x := 1 }}{{ if true }}{{ $x := 2 }}{{ $x }}{{ end }}{{ $x }}"
              "{{ range .L }}{{ $x = . }}{{ end }}{{ $x }}")
    assert go(source, {"L": [5, 6]}) == "216"


def test_with_sets_the_dot_and_else_keeps_it() -> None:
    source = "{{ with .A }}{{ .B }}{{ else }}{{ .C }}{{ end }}"
    assert go(source, {"A": {"B": "b"}, "C": "c"}) == "b"
    assert go(source, {"A": {}, "C": "c"}) == "c"


def test_and_or_return_operands_and_short_circuit() -> None:
    assert go('{{ or "" "x" }}|{{ and 1 0 }}|{{ and 0 .missing.field }}', {}) == "x|0|0"


def test_comparisons_refuse_mixed_types() -> None:
    source = '{{ eq 1 2 1 }} {{ ne "a" "b" }} {{ lt 1 2 }} {{ ge "b" "a" }}'
    assert go(source) == "true true true true"
    with pytest.raises(GoTemplateError, match="incompatible types"):
        go('{{ eq 1 "1" }}')


def test_define_template_and_block() -> None:
    source = ('{{ define "x" }}<{{ .n }}|{{ $.n }}>{{ end }}{{ template "x" .A }}'
              '{{ block "y" .B }}[{{ . }}]{{ end }}')
    assert go(source, {"A": {"n": 1}, "B": 2}) == "<1|1>[2]"


def test_functions_come_from_the_table_with_the_piped_value_last() -> None:
    functions = {"split": lambda s, sep: s.split(sep), "join": lambda sep, items: sep.join(items)}
    assert go('{{ split .S "," | join "+" }}', {"S": "a,b"}, functions=functions) == "a+b"
    with pytest.raises(GoTemplateError, match='function "nope" not defined'):
        go("{{ nope }}")


def test_a_failing_function_names_file_line_and_function() -> None:
    def boom(_: str) -> str:
        raise ValueError("bad input")
    with pytest.raises(GoTemplateError, match=r"t.yaml:2: error calling boom: bad input"):
        go('\n{{ boom "x" }}', functions={"boom": boom})


def test_methods_are_called_and_fields_read_from_objects() -> None:
    class Pool:
        Name = "p"

        def IsSpot(self) -> bool:
            return True

    assert go("{{ .P.Name }} {{ .P.IsSpot }}", {"P": Pool()}) == "p true"


def test_len_counts_a_strings_bytes() -> None:
    assert go('{{ len "é" }}') == "2"


def test_parse_errors_name_file_and_line() -> None:
    with pytest.raises(GoTemplateError, match=r"t.yaml:2: .*end"):
        go("x\n{{ if .A }}")
    with pytest.raises(GoTemplateError, match=r"t.yaml:1: unexpected"):
        go("{{ end }}")
