"""A whole `cluster/` tree converted: every template parsed and emitted, the refusals collected
(never dropped), and a report of the constructs and functions used."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from clmgit.convert.emitter import Usage, to_jinja
from clmgit.convert.nodes import Parsed
from clmgit.convert.parser import GoTemplateError, parse

TEMPLATE_PREFIX = "cluster/"


@dataclass
class Conversion:
    files: dict[str, str] = field(default_factory=dict)  # path → Jinja text
    refused: list[str] = field(default_factory=list)  # one "file:line: construct ..." each
    usage: Usage = field(default_factory=Usage)
    #: Each converted file's Go syntax tree, kept for the check (which renders the original).
    parsed: dict[str, Parsed] = field(default_factory=dict, repr=False)

    def report(self) -> str:
        lines = [f"files converted: {len(self.files)}", f"files refused: {len(self.refused)}"]
        lines += [f"  {r}" for r in self.refused]
        lines.append("constructs: " + ", ".join(f"{k} {v}" for k, v in
                                                self.usage.constructs.most_common()))
        lines.append("functions: " + ", ".join(f"{k} {v}" for k, v in
                                               self.usage.functions.most_common()))
        return "\n".join(lines) + "\n"


def convert_tree(files: Mapping[str, bytes]) -> Conversion:
    """Every UTF-8 file under `cluster/` converted; others (and non-text files) are left out."""
    result = Conversion()
    for path in sorted(files):
        if not path.startswith(TEMPLATE_PREFIX):
            continue
        try:
            text = files[path].decode()
        except UnicodeDecodeError:
            result.refused.append(f"{path}: is not UTF-8 text")
            continue
        try:
            parsed = parse(text, path)
            result.files[path] = to_jinja(parsed, result.usage)
            result.parsed[path] = parsed
        except GoTemplateError as e:
            result.refused.append(str(e))
    return result
