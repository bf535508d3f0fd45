"""Freezing a channel refuses promotions into it until it is unfrozen."""

from __future__ import annotations

from clmgit.channels import set_freeze
from clmgit.errors import ConfigError, RefusedError
from clmgit.promotion.write import Landed, catch_up, land
from clmgit.workspace import Workspace


def set_frozen(
    ws: Workspace, channel: str, *, frozen: bool, reason: str = "", push: bool = False
) -> Landed | None:
    """Freeze or unfreeze; None when the channel is already so."""
    ch = ws.channel(channel)
    if frozen and not reason.strip():
        raise ConfigError("a freeze needs a reason: --reason TEXT")
    if ch.frozen == frozen and (not frozen or ch.freeze_reason == reason):
        if push:
            catch_up(ws)
        return None
    if frozen and ch.frozen:
        # Replacing the reason would hide why the channel was frozen in the first place.
        raise RefusedError(
            f"channel {ch.name!r} is already frozen: {ch.freeze_reason}; `clmgit unfreeze "
            f"{ch.name}` first to freeze it for another reason"
        )
    text = set_freeze(ws.channel_text(ch), ch, frozen=frozen, reason=reason if frozen else "")
    action = "freeze" if frozen else "unfreeze"
    subject = f"{action}({ch.name}): {reason}" if frozen else f"{action}({ch.name})"
    message = f"{subject}\n\nClmgit-Action: {action}\n"
    return land(ws, files={ch.path: text}, message=message, push=push)
