"""One template rendered both ways: the Go original with the evaluator, the conversion with the
project's Jinja environment; and the first lines where two renderings differ."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from clmgit.config.templates import make_environment
from clmgit.convert import evaluator
from clmgit.convert.emitter import to_jinja
from clmgit.convert.parser import parse


def render_both(source: str, data: Mapping[str, Any],
                functions: Mapping[str, Callable[..., Any]], *,
                name: str = "template") -> tuple[str, str]:
    """(Go's output, the converted template's output) of `source` with `data` as the dot and
    `functions` (CLM's names) on both sides; the Jinja side in the project's environment."""
    parsed = parse(source, name)
    go = evaluator.render(parsed, data, functions)
    env = make_environment()
    env.globals.update(functions)
    return go, env.from_string(to_jinja(parsed)).render(**data)


def first_difference(expected: str, actual: str, *, context: int = 2) -> str:
    """The first differing lines of two renderings, as a short unified diff."""
    lines = difflib.unified_diff(expected.splitlines(keepends=True),
                                 actual.splitlines(keepends=True), "go", "jinja", n=context)
    out: list[str] = []
    for line in lines:
        if line.startswith("@@") and out and any(o.startswith("@@") for o in out):
            break
        out.append(line)
    return "".join(out)
