"""Promotion history: the git log of `channels/` on the control branch (docs/explanation/design.md).

clmgit's own commits carry trailers (`Clmgit-Action`, `Clmgit-Source`, `Clmgit-Sha`, ...); a
hand-made commit to a channel file shows up as an `edit`.
"""

from __future__ import annotations

from dataclasses import dataclass

from clmgit import yamledit
from clmgit.adapters.git import Commit, trailer_pairs, trailers
from clmgit.channels import CHANNELS_DIR, Channel, Group, channel_path, decode_pin
from clmgit.errors import ConfigError
from clmgit.workspace import Workspace

#: The trailer line of a commit that records a forced branch move (promotion/sync.py).
SYNC_RECORD = "^Clmgit-Action: sync$"
#: How far back `rollback` looks for an earlier pin of a group.
PIN_HISTORY_DEPTH = 500


@dataclass(frozen=True)
class Entry:
    commit: str
    date: str
    author: str
    channel: str
    action: str  # promote, rollback, freeze, unfreeze, sync, edit
    subject: str
    source: str = ""
    sha: str = ""
    groups: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    clusters: int | None = None  # clusters the change moved (None: not recorded)


def history(ws: Workspace, channel: str | None = None, *, group: str | None = None,
            limit: int = 50) -> list[Entry]:
    """Changes to channel files and recorded branch moves, newest first; with `group`, only
    those that moved it."""
    if group and not any(g.name == group for ch in ws.channels.values() for g in ch.groups):
        raise ConfigError(f"no channel has a group {group!r}")
    entries = []
    for c in _logged(ws, channel, None if group else limit):
        pairs = trailer_pairs(c.body)
        t = dict(pairs)
        action = t.get("Clmgit-Action") or "edit"
        subject_channel = c.subject.partition("(")[2].partition(")")[0]
        entries.append(
            Entry(
                commit=c.sha,
                date=c.date,
                author=c.author,
                channel=t.get("Clmgit-Channel") or subject_channel or (channel or ""),
                action=action,
                subject=c.subject,
                source=t.get("Clmgit-Source", ""),
                sha=t.get("Clmgit-Sha", ""),
                groups=tuple(g for g in t.get("Clmgit-Groups", "").split(",") if g),
                overrides=tuple(v for k, v in pairs if k == "Clmgit-Override"),
                clusters=int(t["Clmgit-Clusters"]) if t.get("Clmgit-Clusters", "").isdigit()
                else None,
            )
        )
    if group:
        entries = [e for e in entries if group in e.groups][:limit]
    return entries


def _logged(ws: Workspace, channel: str | None, limit: int | None) -> list[Commit]:
    """The commits that touch channel files, and those that record a forced branch move
    (`sync-branches --force`, which changes no file), in the order of the log."""
    path = channel_path(ws.channel(channel).name) if channel else CHANNELS_DIR
    commits = ws.repo.log(ws.control_sha, paths=[path], limit=limit)
    records = [
        c for c in ws.repo.log(ws.control_sha, grep=SYNC_RECORD, limit=limit)
        if channel is None or channel in trailers(c.body).get("Clmgit-Channel", "").split(",")
    ]
    if not records:
        return commits
    rank = {sha: i for i, sha in enumerate(ws.repo.rev_list(ws.control_sha))}
    merged = {c.sha: c for c in (*commits, *records)}
    return sorted(merged.values(), key=lambda c: rank[c.sha])[:limit]


def pins_in_history(ws: Workspace, channel: Channel, group: Group) -> list[dict[str, str]]:
    """The pins of the group, newest first, as the channel file's history records them (a
    revision whose pin cannot be read is passed over)."""
    found: list[dict[str, str]] = []
    for c in ws.repo.log(ws.control_sha, paths=[channel.path], limit=PIN_HISTORY_DEPTH):
        data = ws.repo.read_file(c.sha, channel.path)
        if data is None:
            continue
        try:
            raw = yamledit.load(data, channel.path) or {}
            found += [decode_pin(g["sha"], channel.sources, channel.path)
                      for g in raw.get("groups") or []
                      if isinstance(g, dict) and g.get("name") == group.name and g.get("sha")]
        except ConfigError:
            continue  # a broken revision of the file holds no usable pin
    return found
