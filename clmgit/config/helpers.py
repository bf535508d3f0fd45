"""The template helpers (docs/reference/templates.md), with the semantics of CLM's template
functions, named in Python style. Each is a plain function; `templates` registers them as filters
and as globals.

`manifest_hash` needs the render in progress and lives in `templates`.
"""

from __future__ import annotations

import base64 as b64
import binascii
import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import jinja2
import yaml

from clmgit.config import quantity

ALL_ZONES = "*"  # the key of the subnets map that lists every zone's subnet (CLM's convention)
_INT64_RE = re.compile(r"[+-]?[0-9]+")
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class HelperError(ValueError):
    """A helper was called with something it cannot work with."""


def _text(value: Any, helper: str) -> str:
    if isinstance(value, jinja2.Undefined):
        str(value)  # a StrictUndefined raises here, naming what is undefined
    if not isinstance(value, str):
        raise HelperError(f"{helper} expects a string, not {type(value).__name__}")
    return value


def _whole(value: Any, helper: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise HelperError(f"{helper}: {what} must be a whole number, not {value!r}")
    return value


def base64decode(value: str) -> str:
    """The text whose standard base64 is `value` (line breaks ignored, padding required)."""
    data = _text(value, "base64decode").replace("\r", "").replace("\n", "")
    try:
        return b64.b64decode(data, validate=True).decode()
    except (binascii.Error, ValueError) as e:
        raise HelperError(f"base64decode: not valid base64 of UTF-8 text ({e})") from None


def account_id(account: str) -> str:
    """The id part of a `type:id` infrastructure account (`aws:123456789012` → `123456789012`)."""
    parts = _text(account, "account_id").split(":")
    if len(parts) != 2:
        raise HelperError(f"account_id: {account!r} is not an account of the form type:id")
    return parts[1]


def az_id(zone: str) -> str:
    """The last part of an availability zone's name (`eu-central-1c` → `1c`)."""
    return _text(zone, "az_id").split("-")[-1]


def az_count(subnets: Mapping[str, Any]) -> int:
    """How many availability zones a subnets-by-zone map has (its `*` entry is not a zone)."""
    if not isinstance(subnets, Mapping):
        raise HelperError(f"az_count expects a mapping of zones to subnets, not {subnets!r}")
    return sum(1 for zone in subnets if zone != ALL_ZONES)


def asg_size(pool_size: int, asgs_per_pool: int) -> int:
    """The size of each of a pool's Auto Scaling groups; the pool size must divide evenly."""
    size = _whole(pool_size, "asg_size", "the pool size")
    count = _whole(asgs_per_pool, "asg_size", "the number of groups")
    if count <= 0 or size % count:
        raise HelperError(f"asg_size: pool size {size} is not an exact multiple of {count}")
    return size // count


def parse_int64(value: str) -> int:
    """A base-10 signed 64-bit integer, strictly (no spaces, no underscores, no overflow)."""
    text = _text(value, "parse_int64")
    if not _INT64_RE.fullmatch(text) or not -(2**63) <= int(text) < 2**63:
        raise HelperError(f"parse_int64: {text!r} is not a 64-bit integer")
    return int(text)


def sum_quantities(*quantities: Any) -> str:
    """The sum of Kubernetes quantities (a list may be passed too), in canonical form."""
    items = [q for item in quantities for q in (item if isinstance(item, list | tuple) else [item])]
    try:
        return str(quantity.add([quantity.parse(_text(q, "sum_quantities")) for q in items]))
    except quantity.QuantityError as e:
        raise HelperError(f"sum_quantities: {e}") from None


def scale_quantity(value: str, factor: float) -> str:
    """A Kubernetes quantity times a factor > 0, in canonical form (`100m`×2 → `200m`)."""
    if isinstance(factor, bool) or not isinstance(factor, int | float):
        raise HelperError(f"scale_quantity: the factor must be a number, not {factor!r}")
    try:
        return str(quantity.scale(quantity.parse(_text(value, "scale_quantity")), factor))
    except quantity.QuantityError as e:
        raise HelperError(f"scale_quantity: {e}") from None


def to_yaml(value: Any) -> str:
    """Block-style YAML of `value`, keys sorted, without the trailing newline (for `indent`)."""
    text: str = yaml.dump(plain(value), Dumper=_DUMPER, default_flow_style=False,
                          sort_keys=True, allow_unicode=True)
    return text.removesuffix("\n...\n").rstrip("\n")


def to_json(value: Any, indent: int | None = None) -> str:
    """JSON of `value`, keys sorted; on one line unless `indent` is given."""
    return json.dumps(plain(value), sort_keys=True, ensure_ascii=False, indent=indent)


def plain(value: Any) -> Any:
    """Plain data (dicts, lists, scalars) from what a template holds: mappings, tuples, and the
    registry's dataclasses."""
    if isinstance(value, jinja2.Undefined):
        str(value)  # raises for a StrictUndefined
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise HelperError(f"cannot convert a {type(value).__name__} to YAML or JSON")


#: By their own names. `base64` and `sha256` are CLM's (`clmfuncs`), which keep raw bytes.
HELPERS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    base64decode, account_id, az_id, az_count, asg_size, parse_int64,
    sum_quantities, scale_quantity, to_yaml, to_json)}
