"""Go's fmt as the Go-template evaluator and CLM's functions print values; each expectation is
Go's documented behaviour (pkg.go.dev/fmt: `%v` of a float64 is `%g` in its shortest form,
slices `[elem0 elem1 ...]`, maps `map[key1:value1 ...]` in key-sorted order with ints compared
as numbers, `Sprint` spaces operands when neither is a string, and the `%!verb(type=value)`,
`%!verb(MISSING)`, `%!(EXTRA type=value)` forms of a wrong call)."""

from __future__ import annotations

import pytest

from clmgit.config.gofmt import (
    GoFormatError,
    GoPointer,
    GoStruct,
    Int32,
    Int64,
    check_format,
    output_value,
    sprint,
    sprint_value,
    sprintf,
    sprintln,
)


@pytest.mark.parametrize(("value", "text"), [
    (1e6, "1e+06"), (123456.0, "123456"), (1234567.0, "1.234567e+06"), (0.5, "0.5"),
    (3.0, "3"), (1e-05, "1e-05"), (0.0001, "0.0001"), (-2.5, "-2.5"),
    (1.2345678e7, "1.2345678e+07"), (1e21, "1e+21"), (0.1 + 0.2, "0.30000000000000004"),
    (float("inf"), "+Inf"), (float("-inf"), "-Inf"), (float("nan"), "NaN"), (-0.0, "-0"),
])
def test_floats_print_in_gos_shortest_form(value: float, text: str) -> None:
    assert sprint_value(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (["a", "b"], "[a b]"), ([], "[]"), ([None, True, 1.5], "[<nil> true 1.5]"),
    ({"b": 2, "a": 1}, "map[a:1 b:2]"), ({}, "map[]"), ({10: "a", 2: "b"}, "map[2:b 10:a]"),
    ({"a": [1, 2], "b": {"c": False}}, "map[a:[1 2] b:map[c:false]]"), (None, "<nil>"),
    (b"raw", "raw"),
])
def test_slices_and_maps_print_as_go_lays_them_out(value: object, text: str) -> None:
    assert sprint_value(value) == text


def test_sprint_spaces_operands_only_between_non_strings() -> None:
    assert sprint(["a", 1, 2, "b"]) == "a1 2b"
    assert sprint(["a", "b"]) == "ab"
    assert sprint([1.5, [1]]) == "1.5 [1]"
    assert sprintln(["a", 1]) == "a 1\n"


@pytest.mark.parametrize(("form", "args", "text"), [
    ("%x|%X", ["hello", 255], "68656c6c6f|FF"), ("%6.2f|", [3.14159], "  3.14|"),
    ("%-5d|", [42], "42   |"), ("%05d", [-42], "-0042"), ("%+d", [42], "+42"),
    ("%v %v", [[1, "a"], {"k": 1}], "[1 a] map[k:1]"), ("%s", [["a"]], "[a]"),
    ("%q", ['a"b'], '"a\\"b"'), ("%t", [False], "false"),
    ("%d", ["hi"], "%!d(string=hi)"), ("hi%d", [], "hi%!d(MISSING)"),
    ("hi", ["guys"], "hi%!(EXTRA string=guys)"),
])
def test_sprintf_verbs_and_wrong_calls(form: str, args: list[object], text: str) -> None:
    assert sprintf(form, args) == text


@pytest.mark.parametrize(("form", "reason"), [
    ("%s-%d %v %q %x %X %t %f %% %-5s %+d %05d %.2f %8.3f %.1s", None),
    ("%e", "the verb %e"), ("%+v", "the directive %+v"), ("%05s", "the directive %05s"),
    ("%.2d", "the directive %.2d"), ("%*d", "the directive %*d"), ("a%", "a % with no verb"),
    ("%[1]s", "a % with no verb"), ("%#x", "the directive %#x"),
])
def test_check_format_names_what_clmgit_would_print_otherwise(form: str,
                                                              reason: str | None) -> None:
    assert check_format(form) == reason


def test_a_pointer_prints_its_target_only_as_template_output() -> None:
    assert output_value(GoPointer("a")) == "a"
    assert output_value(GoPointer(None)) == "<nil>"
    assert output_value(None) == "<no value>"
    with pytest.raises(GoFormatError, match="as Go prints it"):
        sprint([GoPointer("a")])


def test_go_integer_types_are_named_where_fmt_names_them() -> None:
    assert sprintf("%s|%s|%s", [Int32(1), Int64(2), 3]) == \
        "%!s(int32=1)|%!s(int64=2)|%!s(int=3)"
    assert sprintf("x", [Int64(7)]) == "x%!(EXTRA int64=7)"


def test_a_struct_is_never_printed_as_a_map() -> None:
    with pytest.raises(GoFormatError):
        sprint_value(GoStruct(Name="x"))
    with pytest.raises(GoFormatError):
        sprintf("%v", [[GoStruct()]])
