"""Adding a config source to a running fleet (`clmgit sources add`), in one reviewable commit.

The source is appended to `sources:` in `clmgit.yaml` (a repository that declared none first
gets its own entry, `main`), and every pinned group of every channel is pinned to the pin it
had — a bare `sha:` is the main source's — plus the new source at the head of its branch for
that channel. The commit changes no cluster's main-source content: every cluster goes from
`<sha>#<hash>` to `main=<sha>;<name>=<sha>#<hash>` and is out of sync until reconcile applies
the composed tree, never blocked for want of a pin. The channel files keep every byte but the
`sha:` and `promoted_at:` values (the soak and the progress deadline count from now); a
channel without groups follows its branch in every source and is not touched.

A frozen channel is refused unless `ignore_freeze` is given: the new source's content reaches
its clusters as a promotion would, so a freeze is lifted only by asking, and the commit records
it (`Clmgit-Override: ignore-freeze`). See docs/how-to/several-config-sources.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from clmgit import timestamps, yamledit
from clmgit.channels import Channel, Pins, encode_pin, pin_groups
from clmgit.errors import ConfigError, GitError, RefusedError
from clmgit.layout import (
    NAME_RE,
    SETTINGS_PATH,
    Sources,
    load_settings,
    parse_sources,
)
from clmgit.promotion.write import land
from clmgit.redact import redact
from clmgit.timestamps import format_timestamp
from clmgit.workspace import SourceRepos, Workspace, read_branch

ACTION = "add-source"
IGNORE_FREEZE = "ignore-freeze"


@dataclass(frozen=True)
class ChannelPin:
    """What one channel's groups get for the new source: the head of `branch` there."""

    channel: str
    branch: str
    sha: str
    groups: tuple[str, ...]  # the groups pinned (none: the channel follows its branches)
    frozen: bool = False


@dataclass(frozen=True)
class SourceAdded:
    """What `sources add` did (outcome `landed`) or would do (`dry-run`)."""

    outcome: str
    source: str
    repo: str  # as given, credentials masked
    channels: tuple[ChannelPin, ...]
    files: tuple[str, ...]
    message: str
    overrides: tuple[str, ...] = ()
    commit: str | None = None
    pushed: bool = False


def add_source(ws: Workspace, *, name: str, repo: str, branches: Mapping[str, str] | None = None,
               ignore_freeze: bool = False, push: bool = False,
               dry_run: bool = False) -> SourceAdded:
    """Add source `name` (a git URL or a path) after the others and pin it in every pinned
    group at its branch heads, in one commit; nothing is written when anything is refused."""
    branches = dict(branches or {})
    _check_name(ws.sources, name)
    _check_no_credentials(repo)
    for channel in branches:
        ws.channel(channel)  # an unknown channel is refused, naming the known ones
    settings_text, sources = _settings(ws, name, repo, branches)
    opened = SourceRepos(sources, ws.repo)
    heads = [_head(opened, sources, ch, name) for ch in ws.channels.values()]
    frozen = [ch for ch, pin in zip(ws.channels.values(), heads, strict=True)
              if pin.frozen and pin.groups]
    if frozen and not ignore_freeze:
        first = frozen[0]
        raise RefusedError(
            f"channel {first.name!r} is frozen ({first.freeze_reason or 'no reason given'}); "
            f"pass --ignore-freeze to pin source {name!r} there too (recorded), or unfreeze it")
    files = {SETTINGS_PATH: settings_text}
    for ch, pin in zip(ws.channels.values(), heads, strict=True):
        if pin.groups:
            files[ch.path] = _pinned(ws, ch, sources, name, pin.sha)
    overrides = tuple(f"{IGNORE_FREEZE}: {ch.name}" for ch in frozen)
    message = _message(name, heads, overrides)
    result = SourceAdded("dry-run", name, redact(repo), tuple(heads), tuple(files), message,
                         overrides)
    if dry_run:
        return result
    landed = land(ws, files=files, message=message, push=push)
    return replace(result, outcome="landed", commit=landed.commit, pushed=landed.pushed)


def _check_name(sources: Sources, name: str) -> None:
    if not NAME_RE.fullmatch(name):
        raise ConfigError(f"a source's name is of [a-z0-9-]+, not {name!r}")
    if name in sources.names:
        raise ConfigError(f"config source {name!r} is already listed in {SETTINGS_PATH} "
                          f"(sources: {', '.join(sources.names)})")


def _check_no_credentials(repo: str) -> None:
    """`clmgit.yaml` is committed and read by everyone: a token in the URL would be too."""
    url = urlsplit(repo)
    if url.password is not None or (url.username and url.scheme.lower() in ("https", "http")):
        raise ConfigError(f"--repo {redact(repo)} carries credentials, which would be committed "
                          "in clmgit.yaml; give the URL without them (git's credential helper "
                          "supplies them)")


def _settings(ws: Workspace, name: str, repo: str,
              branches: Mapping[str, str]) -> tuple[str, Sources]:
    """`clmgit.yaml` with the source appended, and the sources it then lists (validated as
    any `clmgit.yaml` is)."""
    where = f"{SETTINGS_PATH} on branch {ws.control_branch!r}"
    data = ws.repo.read_file(ws.control_sha, SETTINGS_PATH)
    text = data.decode() if data is not None else ""
    item: dict[str, yamledit.Value] = {"name": name, "repo": repo}
    if branches:
        item["branches"] = dict(branches)
    raw = load_settings(data, where)
    if "sources" in raw:
        doc = yamledit.Document(text, SETTINGS_PATH)
        doc.append(["sources"], item)
        text = doc.text
    else:
        main = ws.sources.main.name
        block = f"sources:\n  - name: {main}\n  - " + "\n    ".join(
            f"{k}: {yamledit.format_scalar(v)}" for k, v in item.items()) + "\n"
        if not text.strip():
            text = block
        else:
            doc = yamledit.Document(text, SETTINGS_PATH)
            doc.append_block(block, {**raw, "sources": [{"name": main}, item]})
            text = doc.text
    return text, parse_sources(load_settings(text.encode(), where), where)


def _head(opened: SourceRepos, sources: Sources, ch: Channel, name: str) -> ChannelPin:
    """Where the new source's branch for the channel is; refused when there is none."""
    branch = sources.get(name).branch(ch.name, ch.branch)
    sha, _ = read_branch(opened.repo(name), branch)  # opening refuses an unreadable source
    if sha is None:
        raise GitError(f"config source {name!r} has no branch {branch!r} for channel "
                       f"{ch.name!r}; create it, or name another with --branch "
                       f"{ch.name}=BRANCH")
    pinned = tuple(g.name for g in ch.groups if g.pins)
    return ChannelPin(ch.name, branch, sha, pinned, ch.frozen)


def _pinned(ws: Workspace, ch: Channel, sources: Sources, name: str, sha: str) -> str:
    """The channel file with each pinned group's pin extended by the new source, pinned now:
    the soak and the progress deadline count from when the new source's content was pinned."""
    now = format_timestamp(timestamps.now())
    pins = {g.name: {"sha": encode_pin(_extended(g.pins, sources, name, sha)),
                     "promoted_at": now} for g in ch.groups if g.pins}
    return pin_groups(ws.channel_text(ch), ch, pins)


def _extended(pins: Pins, sources: Sources, name: str, sha: str) -> dict[str, str]:
    every = {**pins, name: sha}
    return {n: every[n] for n in sources.names if n in every}


def _message(name: str, heads: list[ChannelPin], overrides: tuple[str, ...]) -> str:
    pinned = [h for h in heads if h.groups]
    subject = (f"{ACTION}({name}): pin {sum(len(h.groups) for h in pinned)} group(s) of "
               f"{len(pinned)} channel(s) at its branch heads")
    lines = [f"- {h.channel}: {h.branch} {h.sha[:7]} [{','.join(h.groups)}]" for h in pinned]
    body = [subject, "\n".join(lines)] if lines else [subject]
    if overrides:
        body.append("Overrides:\n" + "\n".join(f"- {o}" for o in overrides))
    trailers = [f"Clmgit-Action: {ACTION}", f"Clmgit-Added-Source: {name}"]
    if pinned:
        trailers.append("Clmgit-Channel: " + ",".join(h.channel for h in pinned))
    trailers += [f"Clmgit-Override: {IGNORE_FREEZE}"] if overrides else []
    body.append("\n".join(trailers))
    return "\n\n".join(body) + "\n"
