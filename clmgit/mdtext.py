"""The one Markdown escaper: text from input (commit subjects, author names, freeze reasons,
problem titles, names from channel files and records) shown in Markdown as the characters it
is, never as markup. The Markdown report, the pull-request body and GitHub Actions' step
summaries build their text with these functions alone.

GitHub renders Markdown as GFM and then turns `@name` and `@org/team` into mentions in the text
it rendered, so an escape cannot stop those: a zero-width space after each `@` does.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

#: What could open markup inline: emphasis, code, links and images, HTML and entities, table
#: cells, strike-through, math, headings and footnotes. Each is shown with a backslash.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#!|~&$^])")
_MENTION = "@\u200b"
#: What stays as it is in a link's destination (parentheses and spaces are encoded).
_URL_SAFE = ":/?#@!$&'*+,;=%~.-_"


def text(value: str) -> str:
    """`value` as inline text that renders as itself: in a paragraph, a list item, a heading
    or a table cell. Line breaks and other control characters become spaces (a line break
    would end a table row or start a block)."""
    flat = "".join(" " if unicodedata.category(c) == "Cc" else c for c in value)
    return _SPECIAL.sub(r"\\\1", flat).replace("@", _MENTION)


def code(value: str) -> str:
    """`value` as a code span (not for table cells: a `|` there still splits the cell)."""
    flat = "".join(" " if unicodedata.category(c) == "Cc" else c for c in value)
    ticks = "`" * (_longest_backtick_run(flat) + 1)
    # CommonMark takes one space off each end of a span that starts and ends with one.
    pad = " " if flat[:1] == "`" or flat[-1:] == "`" or (
        flat[:1] == flat[-1:] == " " and flat.strip(" ")) else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def code_block(body: str, info: str = "") -> str:
    """`body` in a fenced code block whose fence no run of backticks inside can close."""
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    return f"{fence}{re.sub(r'[^a-z0-9-]', '', info)}\n{body}\n{fence}"


def link(label: str, url: str) -> str:
    """A link with `label` (already Markdown) as its text; a URL that is not http(s) is left
    out (the label alone). Characters that could end the destination are percent-encoded."""
    if not url.startswith(("https://", "http://")):
        return label
    return f"[{label}]({quote(url, safe=_URL_SAFE)})"


def _longest_backtick_run(value: str) -> int:
    return max(map(len, re.findall("`+", value)), default=0)
