"""How lines on stderr look: free text (the default) or, with `--log-format json`
(`CLMGIT_LOG_FORMAT`), one JSON object per line with `time` (RFC 3339, UTC), `level`,
`message`, `logger`, and `cluster` and `step` where the line is about one, for log collectors
that read JSON (Loki, CloudWatch, Elasticsearch).

A record names its cluster or step through `extra={"cluster": ..., "step": ...}`. The lines
clmgit writes itself (notes, the final error) take the same shape through `json_line`.
"""

from __future__ import annotations

import enum
import json
import logging
from datetime import UTC, datetime
from typing import Any

#: Attributes of a record copied into its JSON object when set.
CONTEXT = ("cluster", "step", "event", "channel")


class LogFormat(enum.StrEnum):
    text = "text"
    json = "json"


#: The format this process writes stderr in (set once, by the CLI's common options).
current = LogFormat.text


def json_line(level: str, message: str, *, when: float | None = None, **context: Any) -> str:
    """One JSON object on one line (with its newline)."""
    moment = datetime.now(UTC) if when is None else datetime.fromtimestamp(when, UTC)
    data: dict[str, Any] = {"time": moment.isoformat(timespec="milliseconds")
                            .replace("+00:00", "Z"), "level": level, "message": message}
    data.update({k: v for k, v in context.items() if v not in (None, "")})
    return json.dumps(data, ensure_ascii=False, default=str) + "\n"


class JsonFormatter(logging.Formatter):
    """A record as `json_line` writes it; a traceback, if any, in `exception`."""

    def format(self, record: logging.LogRecord) -> str:
        context = {name: getattr(record, name, None) for name in CONTEXT}
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        return json_line(record.levelname.lower(), record.getMessage(), when=record.created,
                         logger=record.name, exception=record.exc_text, **context).rstrip("\n")


def formatter(fmt: LogFormat) -> logging.Formatter:
    if fmt is LogFormat.json:
        return JsonFormatter()
    return logging.Formatter("%(levelname)s %(name)s: %(message)s")


def stderr_line(level: str, text: str, *, prefix: str = "") -> str:
    """A line clmgit writes to stderr itself, in the current format (`prefix` only in text)."""
    if current is LogFormat.json:
        return json_line(level, text)
    return prefix + text + "\n"
