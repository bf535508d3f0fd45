"""Edits keep every byte they do not change; quoting styles survive."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from clmgit import yamledit
from clmgit.errors import ConfigError
from tests.helpers.hypothesis_profiles import examples

TEXT = """\
# top comment
channel: beta   # trailing comment
groups:
  - name: canary          # first
    selector: {alias: "*-canary"}
    sha: '9f1b3697c6f1d2a1e0c4b7d8e9f0a1b2c3d4e5f6'
    promoted_at: 2026-11-20T10:00:00Z
  # between
  - name: default
frozen: false
"""


def test_replace_keeps_quote_style_and_comments() -> None:
    doc = yamledit.Document(TEXT, "beta.yaml")
    doc.set(["groups", 0], {"sha": "a" * 40, "promoted_at": "2026-11-22T08:00:00Z"})
    expected = TEXT.replace("9f1b3697c6f1d2a1e0c4b7d8e9f0a1b2c3d4e5f6", "a" * 40).replace(
        "2026-11-20T10:00:00Z", "2026-11-22T08:00:00Z"
    )
    assert doc.text == expected


def test_insert_goes_beside_siblings() -> None:
    doc = yamledit.Document(TEXT, "beta.yaml")
    doc.set(["groups", 1], {"sha": "1" * 40})
    assert doc.text == TEXT.replace(
        "  - name: default\n", f'  - name: default\n    sha: "{"1" * 40}"\n'
    )
    assert yaml.safe_load(doc.text)["groups"][1]["sha"] == "1" * 40  # quoted: not an int


def test_top_level_and_null_values() -> None:
    doc = yamledit.Document("channel: x\nfreeze_reason:\nfrozen: false # why\n", "x.yaml")
    doc.set([], {"frozen": True, "freeze_reason": "it's late: go home"})
    assert doc.text == 'channel: x\nfreeze_reason: "it\'s late: go home"\nfrozen: true # why\n'


def test_flow_style_falls_back_to_round_trip() -> None:
    doc = yamledit.Document("# c\ngroups: [{name: a}]\n", "x.yaml")
    doc.set(["groups", 0], {"sha": "b" * 40})
    assert yaml.safe_load(doc.text) == {"groups": [{"name": "a", "sha": "b" * 40}]}
    assert doc.text.startswith("# c\n")


def test_append_to_a_block_list_adds_lines_after_its_last_item() -> None:
    text = ("# settings\nsources:\n  - name: main\n  - name: a\n    repo: /x   # kept\n\n"
            "layout: clm\n")
    doc = yamledit.Document(text, "clmgit.yaml")
    doc.append(["sources"], {"name": "b", "repo": "https://h/b.git", "branches": {"beta": "bb"}})
    assert doc.text == text.replace("# kept\n", "# kept\n  - name: b\n    repo: https://h/b.git\n"
                                    "    branches: {beta: bb}\n")


def test_append_to_a_flow_list_falls_back_to_round_trip() -> None:
    doc = yamledit.Document("sources: [{name: main}]\nlayout: clm\n", "clmgit.yaml")
    doc.append(["sources"], {"name": "b"})
    assert yaml.safe_load(doc.text) == {"sources": [{"name": "main"}, {"name": "b"}],
                                        "layout": "clm"}


def test_malformed_yaml_names_file_and_line() -> None:
    with pytest.raises(ConfigError, match=r"x.yaml: malformed YAML at line 3"):
        yamledit.load("a: 1\nb: [\n", "x.yaml")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=30))
def test_any_string_round_trips(value: str) -> None:
    doc = yamledit.Document(TEXT, "beta.yaml")
    doc.set(["groups", 0], {"promoted_from": value})
    assert yaml.safe_load(doc.text)["groups"][0]["promoted_from"] == value
    assert doc.text.startswith("# top comment\nchannel: beta   # trailing comment\n")


# --- property: an edit of a random channel file changes exactly the requested values -----------

_COMMENT = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x2FF,
                                          blacklist_categories=["Cc"]), max_size=12)
_VALUE = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=20)


def _token(draw, text: str) -> str:
    style = draw(st.sampled_from(["plain", "single", "double"]))
    if style == "single":
        return "'" + text + "'"
    return '"' + text + '"' if style == "double" else text


@st.composite
def channel_files(draw):
    """(text, line end, channel, groups) of a valid channel file in a random form."""
    from clmgit.channels import parse_channel

    def comment() -> str:
        return draw(st.sampled_from(["", "  # " + draw(_COMMENT).replace("\n", " ")]))

    groups = draw(st.lists(st.sampled_from(["canary", "default", "blue", "green"]),
                           unique=True, max_size=3))
    lines = []
    if draw(st.booleans()):
        lines.append("# " + draw(_COMMENT))
    lines += ["channel: beta" + comment(), "source: alpha" + comment()]
    if draw(st.booleans()):
        lines.append("frozen: " + draw(st.sampled_from(["false", "true"])) + comment())
    if draw(st.booleans()):
        lines.append("freeze_reason: " + _token(draw, draw(st.sampled_from(
            ["", "x", "Black Friday"]))) + comment())
    if groups:
        lines.append("groups:" + comment())
        for g in groups:
            lines.append(f"  - name: {g}" + comment())
            if draw(st.booleans()):
                lines.append("    sha: " + _token(draw, "a" * 40) + comment())
            if draw(st.booleans()):
                lines.append("    promoted_at: " + _token(draw, "2026-11-20T10:00:00Z")
                             + comment())
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(lines) + draw(st.sampled_from([end, ""]))
    text = ("\ufeff" if draw(st.booleans()) else "") + text
    channel = parse_channel("beta", text, "channels/beta.yaml")
    return text, end, channel


def _other_lines(text: str, keys: tuple[str, ...]) -> list[str]:
    """The lines that hold none of `keys`, without line ends."""
    return [ln.rstrip("\r") for ln in text.removeprefix("\ufeff").split("\n")
            if not ln.strip().removeprefix("- ").startswith(keys)]


@settings(deadline=None, max_examples=examples(300))
@given(channel_files(), st.booleans(), _VALUE, st.data())
def test_an_edit_changes_exactly_the_requested_values(file, frozen, reason, data) -> None:
    from clmgit.channels import pin_groups, set_freeze

    text, end, channel = file
    before = yamledit.load(text, "x")
    if channel.groups and data.draw(st.booleans()):
        names = data.draw(st.lists(st.sampled_from([g.name for g in channel.groups]),
                                   unique=True, min_size=1))
        pins = {n: {"sha": "b" * 40, "promoted_at": "2026-11-22T08:00:00Z",
                    "promoted_from": "alpha"} for n in names}
        edited = pin_groups(text, channel, pins)
        expected = yamledit.normalize(before)
        for g in expected["groups"]:
            g.update(pins.get(g["name"], {}))
        keys: tuple[str, ...] = ("sha:", "promoted_at:", "promoted_from:")
    else:
        edited = set_freeze(text, channel, frozen=frozen, reason=reason)
        expected = {**yamledit.normalize(before), "frozen": frozen, "freeze_reason": reason}
        keys = ("frozen:", "freeze_reason:")
    assert yamledit.normalize(yamledit.load(edited, "x")) == expected
    assert edited.startswith("\ufeff") == text.startswith("\ufeff")
    assert edited.endswith("\n") == text.endswith("\n")
    if end == "\r\n":
        assert edited.count("\n") == edited.count("\r\n")
    else:
        assert "\r" not in edited.replace(reason, "")
    assert _other_lines(edited, keys) == _other_lines(text, keys)


def test_exactly_the_characters_a_yaml_file_may_not_hold_raw_are_escaped() -> None:
    """YAML's printable set (1.1 and 1.2) less a tab, NEL, the line and paragraph separators
    and a byte order mark is written raw; every other code point as an escape."""
    def raw(c: int) -> bool:
        printable = (0x20 <= c <= 0x7E or 0xA0 <= c <= 0xD7FF or 0xE000 <= c <= 0xFFFD
                     or 0x10000 <= c <= 0x10FFFF)
        return printable and c not in (0x2028, 0x2029, 0xFEFF)

    every = "".join(map(chr, range(0x110000)))
    escaped = yamledit._UNPRINTABLE.findall(every)
    assert escaped == [chr(c) for c in range(0x110000) if not raw(c)]
    assert yaml.safe_load(yamledit.format_scalar("a\tb\u2028c\x7f")) == "a\tb\u2028c\x7f"
