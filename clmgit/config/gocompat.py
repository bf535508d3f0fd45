"""Go's text/template builtins as plain Python, shared by the two renderings of a CLM template:
the Jinja that `clmgit convert` writes calls them (as the globals and the filter of `GO_COMPAT`)
wherever Jinja's own operators would differ from Go, and clmgit's Go evaluator calls them as its
builtins. One definition each: comparisons (`eq ne lt le gt ge`, with Go's type errors), what
`range` visits (maps in sorted key order, an integer's 0..n-1, nothing for nil), a field read
as Go reads it (a map's key even where Python has an attribute of that name), and printing.

The converter writes the fast Jinja operator where it can tell the operands' kinds; these run
only where it cannot, so they cost the render hot path little.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from clmgit.config import gofmt
from clmgit.config.gofmt import GoStruct
from clmgit.config.helpers import HelperError


class GoCompatError(HelperError):
    """A Go builtin's own error (Go's wording where it has one)."""


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str | bytes):
        return "string"
    if value is None:
        return "nil"
    str(value)  # an undefined value raises here and names itself
    return "other"


def go_eq(first: Any, *others: Any) -> bool:
    """Go's `eq`: true if `first` equals any of `others`; operands of two different basic kinds
    (int and string, ...) are an error, as are lists and maps, which Go cannot compare."""
    if not others:
        raise GoCompatError("missing argument for comparison")
    kind = _kind(first)
    for other in others:
        other_kind = _kind(other)
        if kind != other_kind:
            if "nil" not in (kind, other_kind):
                raise GoCompatError("incompatible types for comparison")
            continue
        if kind == "other":
            for value in (first, other):
                if isinstance(value, list | tuple | Mapping):
                    raise GoCompatError(f"non-comparable type {gofmt.sprint_value(value)}")
        if kind == "nil" or first == other:
            return True
    return False


def go_ne(first: Any, second: Any) -> bool:
    return not go_eq(first, second)


def go_lt(first: Any, second: Any) -> bool:
    """Go's `lt`: ints, floats and strings of one kind; anything else is an error."""
    kind = _kind(first)
    if kind not in ("int", "float", "string") or _kind(second) not in ("int", "float", "string"):
        raise GoCompatError("invalid type for comparison")
    if kind != _kind(second):
        raise GoCompatError("incompatible types for comparison")
    return bool(first < second)


def go_le(first: Any, second: Any) -> bool:
    return go_lt(first, second) or go_eq(first, second)


def go_gt(first: Any, second: Any) -> bool:
    return not go_le(first, second)


def go_ge(first: Any, second: Any) -> bool:
    return not go_lt(first, second)


def range_pairs(value: Any) -> list[tuple[Any, Any]]:
    """(key, element) of each step of Go's `range`: a map's keys sorted as Go sorts them, a
    list's indexes, an integer's 0..n-1 (as both), nothing for nil."""
    if isinstance(value, Mapping) and not isinstance(value, GoStruct):
        return [(k, value[k]) for k in sorted(value, key=gofmt.sort_key)]
    if isinstance(value, list | tuple):
        return list(enumerate(value))
    if isinstance(value, int) and not isinstance(value, bool):
        return [(i, i) for i in range(value)]
    if value is None:
        return []
    raise GoCompatError(f"range can't iterate over {gofmt.sprint_value(value)}")


def go_range(value: Any) -> list[Any]:
    """The elements `range` visits, for `range x` and `range $e := x`."""
    return [element for _, element in range_pairs(value)]


def go_range2(value: Any) -> list[tuple[Any, Any]]:
    """`range $k, $e := x`; an integer takes one variable only."""
    if isinstance(value, int) and not isinstance(value, bool):
        raise GoCompatError(f"can't use {value} to iterate over more than one variable")
    return range_pairs(value)


def go_field(receiver: Any, name: str) -> Any:
    """`.name` as Go reads it, for names Python objects have attributes of (`values`, `items`,
    `upper`, ...): a map's key (missing: an error, CLM's `missingkey=error`), nothing else."""
    if isinstance(receiver, Mapping) and not isinstance(receiver, GoStruct):
        if name in receiver:
            return receiver[name]
        raise GoCompatError(f'map has no entry for key "{name}"')
    if receiver is None:
        raise GoCompatError(f"nil pointer evaluating interface {{}}.{name}")
    str(receiver)  # an undefined value raises here and names itself
    raise GoCompatError(f"can't evaluate field {name} in type {type(receiver).__name__}")


def go_len(value: Any) -> int:
    """Go's `len`: a string's bytes, a list's or a map's elements; anything else fails."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogateescape"))
    if isinstance(value, bytes | list | tuple) or (isinstance(value, Mapping)
                                                   and not isinstance(value, GoStruct)):
        return len(value)
    str(value)  # an undefined value raises here and names itself
    raise GoCompatError(f"len of type {type(value).__name__}")


#: Go's parameter types of CLM's functions and of its data's methods, where Go's rules for an
#: argument differ from Python's: a constant converts to the parameter's type (`go_const`), any
#: other value must be of exactly that type (`go_typed`). None: a parameter not checked here.
GO_PARAMS: dict[str, tuple[str | None, ...]] = {
    "instanceTypeCPUQuantity": ("types.InstanceType",),
    "instanceTypeMemoryQuantity": ("types.InstanceType",),
    "kubernetesSizeToKiloBytes": (None, "float64"),
    "MemoryFraction": ("int64",),
    "AvailableStorage": ("float64", "int64", "float64"),
}


def go_const(value: Any, go_type: str | None) -> Any:
    """A constant argument as Go converts it to a parameter of `go_type`: an integral number to
    int64, any number to float64, a string to a named string type. Anything else stays as it
    is, and `go_typed` then refuses it as Go does."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if go_type == "int64" and number and float(value).is_integer():
        return gofmt.Int64(value)
    if go_type == "float64" and number:
        return float(value)
    if go_type == "types.InstanceType" and isinstance(value, str):
        return gofmt.InstanceType(value)
    return go_typed(value, go_type)


def go_typed(value: Any, go_type: str | None) -> Any:
    """`value` where Go passes it to a parameter of `go_type`: its type is exactly that (an
    `int` is no `int64`, a `string` no `types.InstanceType`); else Go's error."""
    if go_type is None:
        return value
    if value is None:
        raise GoCompatError(f"invalid value; expected {go_type}")
    str(value)  # an undefined value raises here and names itself
    actual = (gofmt.go_type(value) if isinstance(value, bool | int | float | str)
              else type(value).__name__)
    if actual != go_type:
        raise GoCompatError(f"wrong type for value; expected {go_type}; got {actual}")
    return value


def go_print(*args: Any) -> str:
    return gofmt.sprint(list(args))


def go_println(*args: Any) -> str:
    return gofmt.sprintln(list(args))


def go_printf(form: Any, *args: Any) -> str:
    return gofmt.sprintf(form, list(args))


#: The globals converted templates call (the builtins' Jinja names).
GO_COMPAT: dict[str, Callable[..., Any]] = {
    "go_eq": go_eq, "go_ne": go_ne, "go_lt": go_lt, "go_le": go_le, "go_gt": go_gt,
    "go_ge": go_ge, "go_len": go_len, "go_range": go_range, "go_range2": go_range2,
    "go_field": go_field, "go_const": go_const, "go_typed": go_typed,
    "go_print": go_print, "go_println": go_println, "go_printf": go_printf,
}
#: The filter a converted `{{ x }}` of a value that may not be a string goes through.
GO_OUT = "go_out"
