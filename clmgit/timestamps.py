"""Timestamps as clmgit writes and reads them: RFC 3339 in UTC, to the second (`...Z`)."""

from __future__ import annotations

from datetime import UTC, datetime


def format_timestamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(text: str | None) -> datetime | None:
    """An aware datetime (naive ones are taken as UTC); None for empty or malformed text."""
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
