"""Signed pins: with `signing.require_signed_pins` (clmgit.yaml) or `--require-signed-pins`,
reconcile applies a channel's pin only if the latest commit on the control branch that moved
it there is signed by an allowed key (clmgit/signing.py). That commit is the newest one that
changed how often the channel file names the pinned SHA (`git log -S`); for a channel without
pins, which follows its branch, the branch's head commit itself. A refused cluster is
`skipped`, with the commit and its author named."""

from __future__ import annotations

import re
import threading

from clmgit import signing
from clmgit.errors import ConfigError
from clmgit.model import Cluster
from clmgit.reconcile.plan import Pin
from clmgit.workspace import Workspace, read_branch

_SHA = re.compile(r"[0-9a-f]{40}")


def signed_pins(ws: Workspace, pin: Pin, *, required: bool) -> Pin:
    """`pin`, refusing (SHA None, why) pins not moved by a signed commit when that is
    required here or by clmgit.yaml."""
    where = f"clmgit.yaml on branch {ws.control_branch!r}"
    settings = signing.settings_at(ws.repo, ws.control_sha, where)
    if not (required or settings.require_signed_pins):
        return pin
    why = "--require-signed-pins" if required else "signing.require_signed_pins"
    verifier = signing.verifier_at(ws.repo, ws.control_sha, settings, why=why)
    lock = threading.Lock()  # the verifier's cache and the repository's readers
    moved_by: dict[tuple[str, str, str], str | None] = {}

    def checked(cluster: Cluster) -> tuple[str | None, str]:
        sha, group = pin(cluster)
        found = _SHA.search(sha or "")
        if sha is None or found is None:
            return sha, group
        channel = ws.channels.get(cluster.channel)
        if channel is None:
            return sha, group
        with lock:
            control, _ = read_branch(ws.repo, ws.control_branch, ws.remote)
            key = (control or "", channel.path, found.group())
            if key not in moved_by:
                moved_by[key] = (_pin_commit(ws, control, channel.path, found.group())
                                 if channel.pinned else found.group())
            commit = moved_by[key]
            if commit is None:
                return None, (f"{why}: no commit on {ws.control_branch!r} pins "
                              f"{found.group()[:7]} in {channel.path}")
            (sig,) = verifier.signatures([commit])
        if sig.good:
            return sha, group
        what = "the pin of" if channel.pinned else "the head of the branch of"
        return None, (f"{why}: {what} channel {channel.name!r} was moved by {sig.refusal()}; "
                      "only pins moved by commits signed by an allowed key are applied")

    return checked


def _pin_commit(ws: Workspace, control: str | None, path: str, sha: str) -> str | None:
    if control is None:
        raise ConfigError(f"branch {ws.control_branch!r} does not exist in {ws.location}")
    out = ws.repo.run("log", "-1", "--format=%H", f"-S{sha}", control, "--", path)
    return out.strip() or None
