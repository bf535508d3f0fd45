"""The pin codec: one place decides how a pin {source: sha} is spelled — in the channel file,
as a config version, in a commit subject — and one source keeps today's bytes."""

from __future__ import annotations

import pytest

from clmgit.channels import decode_pin, encode_pin, named, parse_channel, pin_range, pin_version
from clmgit.errors import ConfigError

A, B, C, D = "a" * 40, "b" * 40, "c" * 40, "d" * 40


def test_one_source_is_a_bare_sha_everywhere() -> None:
    pins = decode_pin(A, ["main"], "x")
    assert pins == {"main": A}
    assert encode_pin(pins) == A
    assert pin_version(pins) == A
    assert pin_range({"main": B}, pins) == f"{B[:7]}..{A[:7]}"
    assert pin_range(None, pins) == f"none..{A[:7]}"
    assert named(["main"], "main", "it refuses") == "it refuses"


def test_several_sources_are_spelled_per_source_in_their_order() -> None:
    pins = decode_pin({"main": A, "addons": B}, ["main", "addons"], "x")
    assert encode_pin(pins) == {"main": A, "addons": B}
    assert pin_version(pins) == f"main={A};addons={B}"
    assert pin_range({"main": C, "addons": D}, pins) == (
        f"main {C[:7]}..{A[:7]}, addons {D[:7]}..{B[:7]}")
    assert named(["main", "addons"], "addons", "it refuses") == "source 'addons': it refuses"


def test_a_channel_reads_either_spelling_and_knows_a_whole_pin() -> None:
    text = (f"channel: beta\ngroups:\n  - name: a\n    sha: {{addons: {B}, main: {A}}}\n"
            f"  - name: b\n    sha: {A}\n  - name: c\n")
    two = parse_channel("beta", text, "channels/beta.yaml", ["main", "addons"])
    assert [two.pins_of(g) for g in two.groups] == [{"main": A, "addons": B}, None, None]
    assert list(two.pins_of(two.groups[0]) or {}) == ["main", "addons"]  # the sources' order
    one = parse_channel("beta", text, "channels/beta.yaml")
    assert [one.pins_of(g) for g in one.groups] == [None, {"main": A}, None]


def test_a_pin_that_is_no_full_sha_is_refused_naming_its_source() -> None:
    with pytest.raises(ConfigError, match="sha of source 'addons' must be a full 40-hex"):
        decode_pin({"main": A, "addons": "abc"}, ["main", "addons"], "x")
    with pytest.raises(ConfigError, match="sha must be a full 40-hex commit SHA, not 'abc'"):
        decode_pin("abc", ["main"], "x")
