"""Generated data held to real Go: values of every type CLM's data holds printed through plain
output, `print` and `printf` (generated directives), and generated `taints` items read through
`NodePool.Taints`; each batch is one call of the Go judge, compared with clmgit both ways."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.helpers.gocases import BASE, NIL, f64, with_pool_items
from tests.helpers.gojudge import go_render
from tests.helpers.gotable import Outcome, converted, evaluated, go_outcome

_SCALARS = st.one_of(
    st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(), st.none(), st.text(st.characters(blacklist_categories=["Cs"]), max_size=8))
VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=8)


@st.composite
def directives(draw: st.DrawFn) -> str:
    """A printf directive of those clmgit prints as Go does."""
    verb = draw(st.sampled_from("sdvqxXtf"))
    flags = draw(st.sampled_from(["", "-"] + (["+", "0", "-+"] if verb in "df" else [])))
    width = draw(st.sampled_from(["", "1", "4", "9"]))
    precision = draw(st.sampled_from(["", ".0", ".2", ".5"])) if verb in "sf" else ""
    return f"%{flags}{width}{precision}{verb}"


def judge_data(value: Any) -> Any:
    """A generated value as the judge's JSON: floats marked float64, None as nil."""
    if isinstance(value, list):
        return [judge_data(v) for v in value]
    if isinstance(value, dict):
        return {k: judge_data(v) for k, v in value.items()}
    if isinstance(value, float):
        return f64(value)
    return NIL if value is None else value


def _same_or_both_fail(go: Outcome, ours: Outcome) -> bool:
    """Go's text, or a failure where Go fails, or clmgit saying it does not print this as Go
    does (a float in `%x`)."""
    if go.failed or (ours.error and "as Go prints it" in ours.error):
        return ours.failed
    return ours.output == go.output


def _check(cases: list[tuple[str, dict[str, Any]]]) -> None:
    answers = go_render([{"template": t, "data": d} for t, d in cases])
    for (template, data), answer in zip(cases, answers, strict=True):
        go = go_outcome(answer)
        for ours in (converted(template, data), evaluated(template, data)):
            assert _same_or_both_fail(go, ours), (template, data["Values"], go, ours)


# A batch shrinks slowly (a judge run per step): a failure is reported as drawn.
_BATCHES: dict[str, Any] = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow],
            "phases": [Phase.explicit, Phase.reuse, Phase.generate]}


@settings(max_examples=12, **_BATCHES)
@given(st.lists(st.tuples(VALUES, directives()), min_size=10, max_size=10))
def test_generated_values_print_as_go_prints_them(values: list[tuple[Any, str]]) -> None:
    cases = []
    for value, directive in values:
        data = {**BASE, "Values": {"v": judge_data(value)}}
        cases += [("[{{ .Values.v }}]", data), ('{{ print .Values.v 1 "s" .Values.v }}', data),
                  (f'{{{{ printf "<{directive}>" .Values.v }}}}', data),
                  ("{{ println .Values.v .Values.v }}", data)]
    _check(cases)


_TAINT_PARTS = st.sampled_from(["a", "k8s.io/b", "=", "==", ":", "::", ",", "", " ", "v",
                                "NoSchedule", "NoExecute", "PreferNoSchedule", "noschedule"])
TAINT_ITEMS = st.lists(_TAINT_PARTS, max_size=8).map("".join)
_TAINTS = ("{{ len .NodePool.Taints }}{{ range $i, $t := .NodePool.Taints }}"
           "[{{ $i }} {{ $t.Key }}|{{ $t.Value }}|{{ $t.Effect }}]{{ end }}")


@settings(max_examples=8, **_BATCHES)
@given(st.lists(TAINT_ITEMS, min_size=15, max_size=15))
def test_generated_taints_parse_as_clm_parses_them(items: list[str]) -> None:
    _check([(_TAINTS, with_pool_items({"taints": item})) for item in items])
