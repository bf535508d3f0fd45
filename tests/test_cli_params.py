"""clmgit's coercion of option values (`clmgit.cli.params`) gives what Typer's pydantic
coercion gives — the same value, or the same error message — for every option and argument of
the app, `--help` included, and a command that takes only plain values never imports pydantic."""

from __future__ import annotations

import enum
import functools
import subprocess
import sys
from typing import Any

import pytest
import typer.main
from hypothesis import given
from hypothesis import strategies as st
from typer import _click
from typer._coercion import build_runtime_param

from clmgit.cli.main import app
from clmgit.cli.params import PlainParam


def _params() -> list[tuple[_click.Command, _click.Parameter]]:
    found: list[tuple[_click.Command, _click.Parameter]] = []

    def walk(command: _click.Command) -> None:
        ctx = _click.Context(command)
        found.extend((command, p) for p in command.get_params(ctx))
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(typer.main.get_command(app))
    return found


PARAMS = _params()
PLAIN = [(c, p) for c, p in PARAMS if isinstance(p._runtime_param, PlainParam)]  # type: ignore[attr-defined]


def _kind(param: _click.Parameter) -> str:
    descriptor = param.type_descriptor  # type: ignore[attr-defined]
    return f"{descriptor.annotation!r} {descriptor.parameter_info.case_sensitive}"


#: One option of each kind: options of a kind are coerced alike (the messages name no option).
KINDS = {_kind(p): (c, p) for c, p in PLAIN}


def _samples(kind: Any) -> st.SearchStrategy[Any]:
    text = st.text(max_size=8) | st.sampled_from(["", " 1", "1_000", "007", "-3", "+4", "٣", "x"])
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        values = [m.value for m in kind]
        return (st.sampled_from(list(kind)) | st.sampled_from(values)
                | st.sampled_from([str(v).upper() for v in values]) | text)
    if kind == list[str]:
        return st.lists(text, max_size=3) | st.lists(text, max_size=3).map(tuple)
    return text | st.integers() | st.booleans()


def _coerce(runtime: Any, param: _click.Parameter, ctx: _click.Context, value: Any) -> Any:
    try:
        return ("value", runtime.coerce(value, param=param, ctx=ctx))
    except _click.exceptions.BadParameter as e:
        return ("error", e.format_message())


def test_every_plain_type_of_the_app_is_coerced_here() -> None:
    kinds = {repr(p.type_descriptor.annotation) for _, p in PLAIN}  # type: ignore[attr-defined]
    assert {"<class 'str'>", "<class 'bool'>", "<class 'int'>", "list[str]",
            "<enum 'Format'>"} <= kinds
    assert len(PLAIN) > 100


@pytest.mark.parametrize("kind", sorted(KINDS))
@given(data=st.data())
def test_a_value_is_coerced_as_typer_coerces_it(kind: str, data: st.DataObject) -> None:
    command, param = KINDS[kind]
    descriptor = param.type_descriptor  # type: ignore[attr-defined]
    value = data.draw(_samples(descriptor.annotation))
    ctx = _click.Context(command)
    ours = _coerce(param._runtime_param, param, ctx, value)  # type: ignore[attr-defined]
    typers = _coerce(_typers(kind), param, ctx, value)
    assert ours == typers
    assert type(ours[1]) is type(typers[1])


@functools.cache
def _typers(kind: str) -> Any:
    return build_runtime_param(KINDS[kind][1].type_descriptor)  # type: ignore[attr-defined]


@pytest.mark.parametrize("args", [("status", "-o", "json"), ("promote", "--dry-run", "a", "b"),
                                  ("status", "-h"), ("--help",)])
def test_a_command_of_plain_values_imports_no_pydantic(args: tuple[str, ...]) -> None:
    probe = ("import sys\nfrom clmgit.cli.main import main\nsys.argv = ['clmgit', *sys.argv[1:]]\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "sys.__stderr__.write('pydantic' if 'pydantic' in sys.modules else 'none')\n")
    done = subprocess.run([sys.executable, "-c", probe, "--repo", "/nonexistent", *args],
                          capture_output=True, text=True, timeout=60)
    assert done.stderr.endswith("none"), done.stderr
