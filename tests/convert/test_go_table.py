"""The edge-case table held to real Go: each case rendered by the Go judge and by clmgit both
ways (converted Jinja, clmgit's evaluator). Go's output must come out the same, or convert must
refuse (saying why), or — for the few cases where Go prints what clmgit does not copy
(`gocases.UNMATCHED`) — the render must fail out loud; where Go fails, clmgit must fail too.
Never a different text without an error.

The reference cases (tests/data/go-template-cases.json, Go 1.27 with CLM's function
library) are part of the table; their answers are Go's own, recorded with CLM's functions,
which the judge does not have.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.data import data_path
from tests.helpers.gocases import UNMATCHED, cases
from tests.helpers.gojudge import go_render
from tests.helpers.gotable import Outcome, converted, evaluated, go_outcome

REFERENCE = data_path("go-template-cases.json")
PAGE = Path(__file__).parents[2] / "docs" / "reference" / "go-template-compatibility.md"


def _reference() -> list[tuple[str, str, dict[str, Any], Outcome]]:
    return [(f"ref_{c['name']}", c["template"], c["data"],
             Outcome(output=c.get("go_output"), error=c.get("go_error")))
            for c in json.loads(REFERENCE.read_text())["cases"]]


@cache
def table() -> dict[str, tuple[str, dict[str, Any], Outcome]]:
    """Every case with Go's answer: the judge's, in one run, or the reference's."""
    own = cases()
    answers = go_render([{"template": t, "data": d} for _, t, d in own])
    out = {name: (t, d, go_outcome(a)) for (name, t, d), a in zip(own, answers, strict=True)}
    out.update({name: (t, d, go) for name, t, d, go in _reference()})
    return out


NAMES = [name for name, _, _ in cases()] + [name for name, *_ in _reference()]


def verdict(name: str, go: Outcome, ours: Outcome, *, refused: bool) -> str:
    """"same", "refused", "unmatched" (an error where Go prints: a case listed, or one that
    convert refuses, which the evaluator then never renders), "both fail"; or "SILENT" when
    clmgit prints something else than Go without a word."""
    if go.failed:
        return "both fail" if ours.failed else "SILENT"
    if ours.output == go.output:
        return "same"
    if ours.refused:
        return "refused"
    if ours.error is not None and (name in UNMATCHED or refused):
        return "unmatched"
    return "SILENT"


def test_the_table_is_large_and_names_are_unique() -> None:
    assert len(NAMES) == len(set(NAMES)) >= 150


@pytest.mark.parametrize("name", NAMES)
def test_converted_and_evaluated_render_as_go_or_say_why_not(name: str) -> None:
    template, data, go = table()[name]
    conversion = converted(template, data)
    assert verdict(name, go, conversion, refused=False) != "SILENT", (template, go, conversion)
    evaluation = evaluated(template, data)
    refused = conversion.refused is not None
    assert verdict(name, go, evaluation, refused=refused) != "SILENT", (template, go, evaluation)


def test_every_unmatched_case_is_one_where_go_prints() -> None:
    """`UNMATCHED` lists only cases where Go prints and clmgit fails: a stale entry would
    excuse a future silent difference."""
    for name in UNMATCHED:
        template, data, go = table()[name]
        assert not go.failed, name
        assert converted(template, data).failed, name


def documented(section: str) -> list[str]:
    """The first column's code spans of the tables under `## section` of the compatibility page."""
    text = PAGE.read_text().split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return [span for row in re.findall(r"^\| (.*?) \|", text, re.MULTILINE)
            for span in re.findall(r"`([^`]+)`", row)]


def test_every_refusal_and_every_failure_where_go_prints_is_documented() -> None:
    """Over the whole table: a refusal names a construct of the page's list, and a failure
    where Go prints says a reason of the page's other list. No other refusal, and no silent
    difference (the test above)."""
    refusals, failures = documented("Refusals"), documented("Where Go prints and clmgit fails")
    assert len(refusals) >= 10 and len(failures) >= 3
    for name in NAMES:
        template, data, go = table()[name]
        ours = converted(template, data)
        if ours.refused is not None:
            construct = re.sub(r"^.*?:\d+: | cannot be converted to Jinja$", "", ours.refused)
            assert any(construct.startswith(r) for r in refusals), (name, construct)
        elif not go.failed and ours.error is not None:
            assert any(f in ours.error for f in failures), (name, ours.error)
