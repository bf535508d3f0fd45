"""Freezing a channel refuses promotions into it until it is unfrozen."""

from __future__ import annotations

from dataclasses import dataclass

from clmgit.channels import set_freeze
from clmgit.errors import ConfigError, RefusedError
from clmgit.promotion.write import catch_up, land
from clmgit.workspace import Workspace


@dataclass(frozen=True)
class FreezeResult:
    """What a freeze or unfreeze did (or, with dry_run, would do): outcome is `landed`,
    `dry-run` or `nothing-to-do`; file and message are what was (or would be) committed."""

    outcome: str
    action: str
    channel: str
    reason: str
    file: str | None = None
    message: str | None = None
    commit: str | None = None
    pushed: bool = False


def set_frozen(
    ws: Workspace, channel: str, *, frozen: bool, reason: str = "", push: bool = False,
    dry_run: bool = False,
) -> FreezeResult:
    """Freeze or unfreeze CHANNEL; with dry_run, say what would be committed and write nothing."""
    ch = ws.channel(channel)
    action = "freeze" if frozen else "unfreeze"
    reason = reason if frozen else ""
    if frozen and not reason.strip():
        raise ConfigError("a freeze needs a reason: --reason TEXT")
    if ch.frozen == frozen and (not frozen or ch.freeze_reason == reason):
        if push and not dry_run:
            catch_up(ws)
        return FreezeResult("nothing-to-do", action, ch.name, ch.freeze_reason)
    if frozen and ch.frozen:
        # Replacing the reason would hide why the channel was frozen in the first place.
        raise RefusedError(
            f"channel {ch.name!r} is already frozen: {ch.freeze_reason}; `clmgit unfreeze "
            f"{ch.name}` first to freeze it for another reason"
        )
    subject = f"{action}({ch.name}): {reason}" if frozen else f"{action}({ch.name})"
    message = f"{subject}\n\nClmgit-Action: {action}\n"
    text = set_freeze(ws.channel_text(ch), ch, frozen=frozen, reason=reason)
    if dry_run:
        return FreezeResult("dry-run", action, ch.name, reason, file=ch.path, message=message)
    landed = land(ws, files={ch.path: text}, message=message, push=push)
    return FreezeResult("landed", action, ch.name, reason, file=ch.path, message=message,
                        commit=landed.commit, pushed=landed.pushed)
