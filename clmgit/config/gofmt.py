"""Go's `fmt` as templates see it: how a value prints (`{{ x }}`, `%v`, `print`, `println`), and
`printf` with the verbs CLM's templates use (`%s %d %v %q %x %X %t %f %%`, width, precision,
`-`, `0`, `+`).

Every value of CLM's template data prints exactly as Go prints it, or fails out loud
(`GoFormatError`): a struct (Go writes its fields, or for a pointer an address), a float in
`%x`, a container whose Go type an `EXTRA` operand would have to name. `check_format` tells
`clmgit convert` which `printf` formats these rules cover, so that it refuses the others.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

from clmgit.config.helpers import HelperError

_VERB_RE = re.compile(r"%([-+# 0]*)(\d+|\*)?(?:\.(\d+|\*)?)?([a-zA-Z%])?")
_VERBS = frozenset("sdvqxXtf%")
#: Flags whose every combination with a verb is printed as Go prints it.
_FLAGS = {"s": "-", "q": "-", "t": "-", "v": "-", "d": "-+0", "f": "-+0", "x": "-", "X": "-",
          "%": ""}
_NAMED_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                  "\v": "\\v", "\\": "\\\\"}
NO_VALUE = "<no value>"


class GoFormatError(HelperError):
    """A value that clmgit cannot print exactly as Go would: an error rather than a guess."""


class GoStruct(dict[str, Any]):
    """A Go struct that clmgit holds as a dict of its fields (CLM's `Cluster`, `NodePool`): read
    like any dict, but Go prints a struct (or a pointer to one) in ways clmgit does not copy,
    ranges over none and cannot take its length, so those fail here too."""


@dataclass(frozen=True)
class GoPointer:
    """A Go pointer: a `*string` (a Karpenter requirement's `Key`), or nil (CLM's `NodePool`
    outside node-pool templates). `{{ x }}` prints what it points to (`<nil>` for nil), as
    text/template follows a pointer it prints; `fmt` itself would print the address, so
    `print`/`printf` of one fail; it is true unless nil, and equal to nothing but itself (Go
    compares a pointer with a string not at all). A field of a nil one is an error."""

    target: str | None

    def __bool__(self) -> bool:
        return self.target is not None

    def __str__(self) -> str:
        return "<nil>" if self.target is None else self.target


class NilSlice(list[Any]):
    """A Go nil slice (what CLM's `NodePool.Taints` gives without a valid taint): a template
    reads it as an empty slice (prints `[]`, has length 0, ranges over nothing), but it is nil,
    not empty, for anything that tells them apart."""

    __slots__ = ()


class Int32(int):
    """A Go `int32` (CLM's `CriticalityLevel`): an int that names its Go type where fmt does."""

    go_type = "int32"


class Int64(int):
    """A Go `int64` (`MinSize`, `MaxSize`, `parseInt64`)."""

    go_type = "int64"


class InstanceType(str):
    """EC2's `types.InstanceType`, a named string type (a node pool's `InstanceTypes`, an
    instance's `InstanceType`): compared and printed as a string, but Go passes only a value of
    this type, or a constant, where a function asks for one."""

    __slots__ = ()
    go_type = "types.InstanceType"


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


def output_value(value: Any) -> str:
    """What `{{ value }}` writes: `%v`, and `<no value>` for nil (text/template prints an
    invalid or nil interface value so)."""
    if type(value) is str:
        return value
    if value is None:
        return NO_VALUE
    if isinstance(value, GoPointer):
        return "<nil>" if value.target is None else value.target
    return sprint_value(value)


def sprint_value(value: Any) -> str:
    """`%v` of a value."""
    if isinstance(value, str):
        return value
    if value is True or value is False:
        return "true" if value else "false"
    if value is None or value == GoPointer(None):  # fmt prints a nil pointer so, no address
        return "<nil>"
    if isinstance(value, bytes):  # a Go string that is not UTF-8 (`base64Decode`)
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, Mapping) and not isinstance(value, GoStruct):
        return _map(value, sprint_value)
    if isinstance(value, list | tuple):
        return "[" + " ".join(sprint_value(v) for v in value) + "]"
    return _unprintable(value)


def _map(value: Mapping[Any, Any], each: Any) -> str:
    keys = sorted(value, key=sort_key)
    return "map[" + " ".join(f"{each(k)}:{each(value[k])}" for k in keys) + "]"


def _unprintable(value: Any) -> str:
    str(value)  # an undefined value (or one only AWS can tell) raises here and names itself
    raise GoFormatError(f"a {type(value).__name__} cannot be printed as Go prints it (Go "
                        "writes a struct's fields or a pointer's address): print its fields")


def sort_key(key: Any) -> Any:
    return (0, key) if isinstance(key, int | float) else (1, str(key))


def sprint(args: list[Any]) -> str:
    """`fmt.Sprint`: a space between two operands when neither is a string."""
    out = []
    for i, arg in enumerate(args):
        if i and not isinstance(arg, str | bytes) and not isinstance(args[i - 1], str | bytes):
            out.append(" ")
        out.append(sprint_value(arg))
    return "".join(out)


def sprintln(args: list[Any]) -> str:
    """`fmt.Sprintln`: operands always spaced, a newline at the end."""
    return " ".join(sprint_value(a) for a in args) + "\n"


# -- printf ------------------------------------------------------------------------------------

def check_format(form: str) -> str | None:
    """Why `printf form ...` cannot be printed exactly as Go prints it, or None if it can."""
    for flags, width, precision, verb in (p for p in _pieces(form) if isinstance(p, tuple)):
        spec = f"%{flags}{width or ''}{'.' + precision if precision is not None else ''}{verb}"
        if not verb:
            return "a % with no verb"
        if verb not in _VERBS:
            return f"the verb {spec}"
        if set(flags) - set(_FLAGS[verb]) or "*" in (width, precision):
            return f"the directive {spec}"
        if precision is not None and (verb not in "sf" or precision == ""):
            return f"the directive {spec}"
    return None


@lru_cache(maxsize=256)
def _pieces(form: str) -> tuple[str | tuple[str, str | None, str | None, str], ...]:
    """The format's literal text and directives, in order."""
    out: list[str | tuple[str, str | None, str | None, str]] = []
    pos = 0
    for m in _VERB_RE.finditer(form):
        out.append(form[pos:m.start()])
        out.append((m.group(1), m.group(2), m.group(3), m.group(4) or ""))
        pos = m.end()
    out.append(form[pos:])
    return tuple(p for p in out if p != "")


def sprintf(form: str, args: list[Any]) -> str:
    """`fmt.Sprintf` for the directives `check_format` accepts; a wrong or missing operand prints
    as Go prints it (`%!d(string=x)`, `%!d(MISSING)`, `%!(EXTRA string=x)`)."""
    if not isinstance(form, str):
        return _unprintable(form) if not isinstance(form, bytes) else sprintf(
            sprint_value(form), args)
    reason = check_format(form)
    if reason is not None:
        raise GoFormatError(f"printf: {reason} is not printed here as Go prints it")
    out: list[str] = []
    queue = list(args)
    for piece in _pieces(form):
        if isinstance(piece, str):
            out.append(piece)
            continue
        flags, width, precision, verb = piece
        if verb == "%":
            out.append("%")
        elif not queue:
            out.append(f"%!{verb}(MISSING)")
        else:
            out.append(_format(queue.pop(0), verb, flags, int(width or 0), precision))
    if queue:
        out.append("%!(EXTRA " + ", ".join(_extra(a) for a in queue) + ")")
    return "".join(out)


def _extra(value: Any) -> str:
    if value is None:
        return "<nil>"
    if isinstance(value, list | tuple | Mapping):  # a struct is refused below
        if isinstance(value, GoStruct):
            return _unprintable(value)
        raise GoFormatError("printf: an extra operand that is a list or a map is not printed "
                            "here as Go prints it (Go names its exact type)")
    return f"{go_type(value)}={sprint_value(value)}"


def go_type(value: Any) -> str:
    """The Go type name fmt writes for a scalar of CLM's data."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return getattr(value, "go_type", "int")
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str | bytes):
        return getattr(value, "go_type", "string")
    return _unprintable(value)


def _format(value: Any, verb: str, flags: str, width: int, precision: str | None, *,
            inner: bool = False) -> str:
    """One operand under one directive; Go applies the directive to each element of a list and
    to each key and value of a map."""
    if isinstance(value, list | tuple):
        return "[" + " ".join(_format(v, verb, flags, width, precision, inner=True)
                              for v in value) + "]"
    if isinstance(value, Mapping) and not isinstance(value, GoStruct):
        return _map(value, lambda v: _format(v, verb, flags, width, precision, inner=True))
    if value is None:  # inside a list or map, unpadded whatever the verb
        if inner:
            return "<nil>"
        return _pad("<nil>", flags, width, number=False) if verb == "v" else f"%!{verb}(<nil>)"
    text = _scalar(value, verb, precision)
    if text is None:  # a bad verb: the operand as %v under the directive's flags and width
        verb, text = f"!{verb}", _bad_operand(value, precision)
    number = _is_number(value) and verb in "dfv!d!f"
    if "+" in flags and number and text and not text.startswith(("-", "+")):
        text = "+" + text
    # Zeros pad a number (after its sign) and a bad verb's operand, except an integer's with a
    # precision, which Go pads with spaces.
    zeros = (number and text[-1:].isdigit()) or (verb.startswith("!") and "0" in flags)
    if _is_number(value) and not isinstance(value, float) and precision is not None:
        zeros = False
    text = _pad(text, flags, width, number=zeros, signed=_is_number(value))
    return f"%{verb}({go_type(value)}={text})" if verb.startswith("!") else text


def _scalar(value: Any, verb: str, precision: str | None) -> str | None:
    """A scalar under `verb`, or None when Go calls the pair a bad verb."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "surrogateescape")
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if verb == "v":
        return sprint_value(value)
    if verb == "s" and isinstance(value, str):
        return value if precision is None else value[:int(precision)]
    if verb == "q":
        if isinstance(value, str):
            return go_quote(value)
        if not is_int:
            return None
        valid = 0 <= value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF
        return go_quote(chr(value) if valid else "\ufffd", "'")  # Go's RuneError
    if verb == "d":
        return str(int(value)) if is_int else None
    if verb == "t":
        return sprint_value(value) if isinstance(value, bool) else None
    if verb in "xX":
        return _hex(value, verb)
    if verb == "f" and isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return go_float(value)
        return format(value, f".{6 if precision is None else int(precision)}f")
    return None


def _bad_operand(value: Any, precision: str | None) -> str:
    """The operand of a bad verb: `%v` with the directive's precision (a string's runes, an
    integer's least digits, a float's significant digits)."""
    if precision is None or isinstance(value, bool):
        return sprint_value(value)
    digits = int(precision)
    if isinstance(value, str):
        return value[:digits]
    if isinstance(value, int):
        text = "" if digits == 0 and value == 0 else str(abs(value)).rjust(digits, "0")
        return ("-" if value < 0 else "") + text
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        mantissa, _, exponent = format(value, f".{max(digits, 1)}g").partition("e")
        return mantissa + (f"e{exponent[0]}{int(exponent[1:]):02d}" if exponent else "")
    return sprint_value(value)


def _hex(value: Any, verb: str) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        text = format(int(value), "x")
    elif isinstance(value, str):
        text = value.encode("utf-8", "surrogateescape").hex()
    elif isinstance(value, float):
        raise GoFormatError("printf: %x of a float is not printed here as Go prints it (a "
                            "hexadecimal float)")
    else:
        return None
    return text.upper() if verb == "X" else text


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _pad(text: str, flags: str, width: int, *, number: bool, signed: bool = False) -> str:
    """`text` padded to `width`: zeros (`number`) go after a number's sign (`signed`), and on the
    left of anything else — a string that starts with "-" included, as Go pads it."""
    if len(text) >= width:
        return text
    if "-" in flags:
        return text.ljust(width)
    if "0" in flags and number:
        sign = text[:1] if signed and text[:1] in "+-" else ""
        return sign + text[len(sign):].rjust(width - len(sign), "0")
    return text.rjust(width)


def go_quote(text: str, quote: str = '"') -> str:
    """`strconv.Quote` (or `QuoteRune` with `'`): Go's escapes for what is not printable, bytes
    that are not UTF-8 as `\\xHH`."""
    out = [quote]
    for c in text:
        code = ord(c)
        if c == quote or c == "\\":
            out.append("\\" + c)
        elif c in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[c])
        elif 0xDC80 <= code <= 0xDCFF:  # a byte of a string that is not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(c) == "Cn":  # unassigned here, perhaps not in Go's tables
            raise GoFormatError(f"%q of {c!r} is not printed here as Go prints it (a character "
                                "newer than this Python's Unicode tables)")
        elif c.isprintable():
            out.append(c)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append(quote)
    return "".join(out)
