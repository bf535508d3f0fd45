"""Kubernetes resource quantities (`100m`, `1.5Gi`, `2e3`): parsed, added, scaled and printed in
the canonical form the Kubernetes API machinery uses, so templates get what `kubectl` would show.

Values are exact whole numbers of nano units. As in Kubernetes, a parsed value is rounded up (away
from zero) to a whole nano unit, and a quantity remembers the notation it was written in (binary
`Ki`, decimal `k`, or exponent `e3`).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

NANO = 10**9
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in _DECIMAL.items()}
_BINARY_SUFFIX = ["", *_BINARY]
_QUANTITY_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([A-Za-z]*(?:[+-]?[0-9]+)?)")
_EXPONENT_RE = re.compile(r"[eE]([+-]?[0-9]+)")


class QuantityError(ValueError):
    pass


@dataclass(frozen=True)
class Quantity:
    nanos: int  # the value in units of 10^-9
    format: str = DECIMAL_SI

    def __str__(self) -> str:
        return canonical(self)


def parse(text: str) -> Quantity:
    """A quantity from its text; `QuantityError` if Kubernetes would refuse it."""
    match = _QUANTITY_RE.fullmatch(text) if isinstance(text, str) else None
    if match is None or not (match.group(2) or match.group(3)):
        raise QuantityError(f"{text!r} is not a Kubernetes quantity")
    sign, whole, fraction, suffix = match.groups()
    fraction = fraction or ""
    digits = int(whole + fraction or "0")
    exponent = -len(fraction)  # value = digits * 10^exponent * (suffix multiplier)
    if suffix in _BINARY:
        numerator, exponent, fmt = digits * 2 ** _BINARY[suffix], exponent, BINARY_SI
    elif suffix in _DECIMAL:
        numerator, exponent, fmt = digits, exponent + _DECIMAL[suffix], DECIMAL_SI
    elif (exp := _EXPONENT_RE.fullmatch(suffix)) is not None:
        numerator, exponent, fmt = digits, exponent + int(exp.group(1)), DECIMAL_EXPONENT
    else:
        raise QuantityError(f"{text!r} is not a Kubernetes quantity (unknown suffix {suffix!r})")
    nanos = _scaled_up(numerator, exponent + 9)
    return Quantity(-nanos if sign == "-" else nanos, fmt)


_INT64 = 2**63
_PARTS_RE = re.compile(r"([+-]?)0*([0-9]*)(?:\.([0-9]*))?(.*)")


def as_int64(text: str) -> int | None:
    """Kubernetes' `ParseQuantity(text).AsInt64()`: the whole value where Kubernetes' parser
    keeps the quantity as an exact int64, else None. That parser's fast path takes at most 18
    digits (fewer with a binary suffix: `100000Gi` is not taken), no fraction of a binary
    suffix (`1.5Gi`), and AsInt64 refuses any amount kept at a negative scale, even a whole
    one (`1000m`, `1.0`). `QuantityError` if `text` is no quantity at all."""
    parse(text)
    if text == "0":
        return 0
    match = _PARTS_RE.fullmatch(text)
    assert match is not None  # parse() accepted it
    sign, num, denom, suffix = match.groups()
    num, denom = num or "0", denom or ""
    mantissa = 1
    if suffix in _BINARY:
        if denom:
            return None
        mantissa = 2 ** _BINARY[suffix]
        precision, scale = 15 - len(num) - _BINARY[suffix] * 3 // 10 - 1, 0
    else:
        exponent = _DECIMAL.get(suffix)
        scale = int(suffix[1:]) if exponent is None else exponent
        precision = 18 - len(num) - len(denom)
    scale -= len(denom)
    if precision < 0 or scale < -9:
        return None
    value = int(num + denom) * mantissa * (-1 if sign == "-" else 1)
    if not -_INT64 <= value < _INT64 or scale < 0:
        return None
    value *= 10**scale
    return value if -_INT64 <= value < _INT64 else None


def _scaled_up(value: int, exponent: int) -> int:
    """`value * 10^exponent`, rounded up: asking for a little gets a little, never nothing."""
    scale: int = 10 ** abs(exponent)  # typeshed: int ** int may be a float
    if exponent >= 0:
        return value * scale
    return -(-value // scale)


def canonical(q: Quantity) -> str:
    """The canonical text: no precision lost, the largest suffix that keeps the number whole."""
    if q.nanos == 0:
        return "0"
    fmt = q.format
    if fmt == BINARY_SI and (abs(q.nanos) < 1024 * NANO or q.nanos % NANO):
        fmt = DECIMAL_SI  # small or fractional binary amounts read better in decimal
    sign = "-" if q.nanos < 0 else ""
    if fmt == BINARY_SI:
        return sign + _binary_text(abs(q.nanos) // NANO)
    return sign + _decimal_text(abs(q.nanos), fmt)


def _binary_text(value: int) -> str:
    power = 0
    while value % 1024 == 0 and power < len(_BINARY_SUFFIX) - 1:
        value //= 1024
        power += 1
    return f"{value}{_BINARY_SUFFIX[power]}"


def _decimal_text(nanos: int, fmt: str) -> str:
    digits, exponent = nanos, -9
    while digits % 10 == 0:
        digits //= 10
        exponent += 1
    shift = exponent % 3  # down to a multiple of three: SI suffixes go in steps of 1000
    digits, exponent = digits * 10**shift, exponent - shift
    if fmt == DECIMAL_EXPONENT:
        return f"{digits}e{exponent}" if exponent else str(digits)
    if exponent > 18:
        digits, exponent = digits * 10 ** (exponent - 18), 18
    return f"{digits}{_DECIMAL_SUFFIX[exponent]}"


def add(quantities: list[Quantity]) -> Quantity:
    """The sum; it takes the notation of the first addend met while the running sum is zero."""
    total, fmt = 0, DECIMAL_SI
    for q in quantities:
        if total == 0:
            fmt = q.format
        total += q.nanos
    return Quantity(total, fmt)


def scale(q: Quantity, factor: float) -> Quantity:
    """`q` times `factor`, computed as CLM's `scaleQuantity` does: in single precision, truncated;
    CPU-like amounts (decimal, under 1024) in milli units, everything else in whole units."""
    if not factor > 0:
        raise QuantityError("the scaling factor must be greater than 0")
    whole = _round_away(q.nanos, NANO)
    if whole < 1024 and q.format == DECIMAL_SI:
        milli = _round_away(q.nanos, NANO // 1000)
        return Quantity(_float32_times(milli, factor) * (NANO // 1000), q.format)
    return Quantity(_float32_times(whole, factor) * NANO, q.format)


def _round_away(nanos: int, unit: int) -> int:
    """`nanos` in whole `unit`s, rounded away from zero (as Kubernetes' `Value()` does)."""
    steps = -(-abs(nanos) // unit)
    return steps if nanos >= 0 else -steps


def _float32_times(value: int, factor: float) -> int:
    # Two float32 operands multiply exactly in float64; rounding the product to float32 then
    # gives the float32 product that the Go code computes, which Go truncates toward zero.
    return int(_float32(_float32(float(value)) * _float32(float(factor))))


def _float32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])
