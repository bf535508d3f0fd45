"""YAML of the config repo's rendered files, parsed fast (libyaml where present), with errors that
name the file and the line."""

from __future__ import annotations

from typing import Any

import yaml

from clmgit.errors import ConfigError

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def compose(text: str, path: str) -> yaml.Node | None:
    """The node tree of a one-document file (values keep the text they were written as)."""
    try:
        return yaml.compose(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as e:
        raise _error(e, path) from None


def load_all(text: str, path: str) -> list[Any]:
    """Every document of a file, empty ones included (as None)."""
    try:
        return list(yaml.load_all(text, Loader=_LOADER))  # noqa: S506 - a safe loader
    except yaml.YAMLError as e:
        raise _error(e, path) from None


def _error(e: yaml.YAMLError, path: str) -> ConfigError:
    mark = getattr(e, "problem_mark", None)
    line = f":{mark.line + 1}" if mark else ""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return ConfigError(f"{path}{line}: the rendered YAML is malformed: {problem}")
