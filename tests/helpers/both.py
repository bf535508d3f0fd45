"""One template rendered both ways: the Go original with the evaluator, the conversion with the
project's Jinja environment."""

from __future__ import annotations

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
