"""Go's `fmt` as templates see it: how a value prints (`%v`, `print`), and `printf` with the
verbs CLM's templates use (`%s %d %v %q %x %X %t %f %%`, width, precision, `-`, `0`, `+`)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

_VERB_RE = re.compile(r"%([-+# 0]*)(\d+|\*)?(?:\.(\d+|\*)?)?([a-zA-Z%])")


def go_float(value: float) -> str:
    """`%v` of a float64 (Go's shortest `%g`): the shortest digits that read back, exponent form
    below 1e-4 and from 1e6 (`1e+06`)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    x = len(text) + exponent - 1
    if x < -4 or x >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        out = f"{mantissa}e{'-' if x < 0 else '+'}{abs(x):02d}"
    elif exponent >= 0:
        out = text + "0" * exponent
    elif x >= 0:
        out = text[:x + 1] + "." + text[x + 1:]
    else:
        out = "0." + "0" * (-x - 1) + text
    return ("-" if sign else "") + out


def sprint_value(value: Any) -> str:
    """`%v` of a value."""
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):  # a Go string that is not UTF-8 (`base64Decode`)
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, Mapping):
        keys = sorted(value, key=_sort_key)
        return "map[" + " ".join(f"{sprint_value(k)}:{sprint_value(value[k])}"
                                 for k in keys) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(sprint_value(v) for v in value) + "]"
    return str(value)


def _sort_key(key: Any) -> Any:
    return (0, key) if isinstance(key, int | float) else (1, str(key))


def sprint(args: list[Any]) -> str:
    """`fmt.Sprint`: a space between two operands when neither is a string."""
    out = []
    for i, arg in enumerate(args):
        if i and not isinstance(arg, str) and not isinstance(args[i - 1], str):
            out.append(" ")
        out.append(sprint_value(arg))
    return "".join(out)


def sprintln(args: list[Any]) -> str:
    return " ".join(sprint_value(a) for a in args) + "\n"


def sprintf(form: str, args: list[Any]) -> str:
    """`fmt.Sprintf` for the verbs above; a wrong or missing operand prints as Go prints it."""
    out: list[str] = []
    pos = 0
    queue = list(args)
    for m in _VERB_RE.finditer(form):
        out.append(form[pos:m.start()])
        pos = m.end()
        flags, width, precision, verb = m.groups()
        if verb == "%":
            out.append("%")
            continue
        if not queue:
            out.append(f"%!{verb}(MISSING)")
            continue
        value = queue.pop(0)
        text = _verb(verb, value, precision)
        if "+" in flags and _is_number(value) and not text.startswith("-"):
            text = "+" + text
        out.append(_pad(text, flags, width))
    out.append(form[pos:])
    if queue:
        extra = ", ".join(f"{_type(a)}={sprint_value(a)}" for a in queue)
        out.append(f"%!(EXTRA {extra})")
    return "".join(out)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type(value: Any) -> str:
    return {bool: "bool", int: "int", float: "float64", str: "string"}.get(type(value),
                                                                           type(value).__name__)


def _bad(verb: str, value: Any) -> str:
    return f"%!{verb}({_type(value)}={sprint_value(value)})"


def _verb(verb: str, value: Any, precision: str | None) -> str:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if verb == "v":
        return sprint_value(value)
    if verb == "s":
        if isinstance(value, str):
            return value if precision is None else value[:int(precision)]
        if isinstance(value, list | tuple | Mapping):
            return sprint_value(value)
        return _bad(verb, value)
    if verb == "q":
        if isinstance(value, str):
            return json.dumps(value, ensure_ascii=False)
        return _bad(verb, value)
    if verb == "d":
        return str(value) if is_int else _bad(verb, value)
    if verb == "t":
        return sprint_value(value) if isinstance(value, bool) else _bad(verb, value)
    if verb in "xX":
        if is_int:
            text = format(value, "x")
        elif isinstance(value, str):
            text = value.encode("utf-8", "surrogateescape").hex()
        else:
            return _bad(verb, value)
        return text.upper() if verb == "X" else text
    if verb == "f":
        if isinstance(value, float):
            return format(value, f".{precision or 6}f")
        return _bad(verb, value)
    return _bad(verb, value)


def _pad(text: str, flags: str, width: str | None) -> str:
    if not width or width == "*":
        return text
    size = int(width)
    if "-" in flags:
        return text.ljust(size)
    sign = text[:1] if text[:1] in "+-" else ""
    if "0" in flags and text[len(sign):].isdigit():
        return sign + text[len(sign):].rjust(size - len(sign), "0")
    return text.rjust(size)
