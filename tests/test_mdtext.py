"""The one Markdown escaper, judged by a CommonMark parser with GFM tables (markdown-it, as
rich ships it): any string shown with `text` renders as exactly that string — no link, image,
HTML, emphasis, code or extra table cell — in a paragraph and in a table cell, with each `@`
defused by a zero-width space; `code` and `code_block` keep any string whole."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from clmgit import mdtext

MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# Characters markup is made of, weighted up so that Hypothesis tries them together often.
MARKUP = st.text(alphabet=st.sampled_from(list("\\`*_[]()<>!|~&#$@:/ \n-+=.x")) | st.characters())


def shown(value: str) -> str:
    flat = "".join(" " if unicodedata.category(c) == "Cc" else c for c in value)
    return flat.replace("@", "@\u200b")


def plain_text(inline) -> str:
    kinds = {c.type for c in inline.children or ()}
    assert kinds <= {"text"}, kinds
    return "".join(c.content for c in inline.children or ())


@given(MARKUP)
def test_text_in_a_paragraph_is_the_text(value: str) -> None:
    tokens = MD.parse(f"a {mdtext.text(value)} z")

    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    assert plain_text(tokens[1]) == f"a {shown(value)} z"


@given(MARKUP)
def test_text_in_a_table_cell_is_one_cell(value: str) -> None:
    tokens = MD.parse(f"| a | b |\n|---|---|\n| {mdtext.text(value)} | z |\n")

    body = tokens[[t.type for t in tokens].index("tbody_open"):]
    cells = [t for t, after in zip(body, body[1:], strict=False) if t.type == "td_open"]
    assert len(cells) == 2
    first = body[[t.type for t in body].index("td_open") + 1]
    text = plain_text(first) if first.type == "inline" else ""
    assert text == shown(value).strip()


@given(MARKUP.filter(lambda v: v != ""))
def test_a_code_span_holds_any_text(value: str) -> None:
    tokens = MD.parse(f"a {mdtext.code(value)} z")

    spans = [c for c in tokens[1].children or () if c.type == "code_inline"]
    assert [s.content for s in spans] == [
        "".join(" " if unicodedata.category(c) == "Cc" else c for c in value)]


@given(st.text())
def test_a_code_block_holds_any_text(value: str) -> None:
    body = value.replace("\r", "")
    tokens = MD.parse(mdtext.code_block(body, "diff"))

    assert [t.type for t in tokens] == ["fence"]
    assert tokens[0].content == body.replace("\0", "\ufffd") + "\n"


def test_the_attacks_of_the_review() -> None:
    assert mdtext.text("<img src=x> | cell") == "\\<img src=x\\> \\| cell"
    assert mdtext.text("[Approved by SRE](https://x)") == "\\[Approved by SRE\\]\\(https://x\\)"
    assert mdtext.text("@org/team") == "@\u200borg/team"
    assert mdtext.link("`abc`", "https://h/a b)") == "[`abc`](https://h/a%20b%29)"
    assert mdtext.link("x", "javascript:alert(1)") == "x"
