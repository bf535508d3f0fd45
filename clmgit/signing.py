"""Signed versions: which commits carry a signature by an allowed key, as git itself verifies it.

The allowed keys are an `allowed_signers` file in git's SSH format (`gpg.ssh.allowedSignersFile`,
one `PRINCIPAL KEY` a line) on the control branch, at the path `clmgit.yaml` names
(`signing: {allowed_signers: PATH}`). Verification is git's own: `%G?` of `git log` with that
file, for any number of commits in one call; only `G` (a good signature by an allowed key)
counts. Nothing here parses a signature.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clmgit.adapters.git import GitRepo
from clmgit.errors import ConfigError

DEFAULT_ALLOWED_SIGNERS = "allowed_signers"
SETTINGS_KEY = "signing"

#: git's `%G?` letters, as a sentence ends.
_STATUS = {
    "B": "its signature is bad",
    "U": "it is signed by a key that is not in the allowed signers",
    "X": "its signature has expired",
    "Y": "it is signed by an expired key",
    "R": "it is signed by a revoked key",
    "E": "its signature cannot be checked",
    "N": "it is not signed",
}


@dataclass(frozen=True)
class Settings:
    """`signing:` of `clmgit.yaml`."""

    allowed_signers: str = DEFAULT_ALLOWED_SIGNERS
    #: reconcile refuses a channel whose latest pin-moving commit is not signed.
    require_signed_pins: bool = False


def parse_settings(raw: Mapping[str, Any], where: str) -> Settings:
    """The `signing` key of `clmgit.yaml` (the whole file's mapping); defaults without it."""
    signing = raw.get(SETTINGS_KEY)
    if signing is None:
        return Settings()
    if not isinstance(signing, Mapping):
        raise ConfigError(f"{where}: key 'signing' must be a mapping, such as "
                          "'signing: {allowed_signers: allowed_signers}'")
    unknown = sorted(str(k) for k in signing if k not in ("allowed_signers",
                                                          "require_signed_pins"))
    if unknown:
        raise ConfigError(f"{where}: signing has unknown key {unknown[0]!r} (known keys: "
                          "allowed_signers, require_signed_pins)")
    path = signing.get("allowed_signers", DEFAULT_ALLOWED_SIGNERS)
    required = signing.get("require_signed_pins", False)
    if not isinstance(path, str) or not path.strip() or path.startswith("/"):
        raise ConfigError(f"{where}: signing.allowed_signers must be a path in the "
                          f"repository, not {path!r}")
    if not isinstance(required, bool):
        raise ConfigError(f"{where}: signing.require_signed_pins must be true or false, "
                          f"not {required!r}")
    return Settings(path.strip(), required)


@dataclass(frozen=True)
class Signature:
    sha: str
    status: str  # git's %G?
    signer: str  # the allowed signer's principal (%GS), when good
    author: str  # "Name <email>"

    @property
    def good(self) -> bool:
        return self.status == "G"

    def refusal(self) -> str:
        """`abc1234 by Ann <ann@example.com>: it is not signed`."""
        why = _STATUS.get(self.status, f"git says {self.status!r}")
        return f"{self.sha[:7]} by {self.author}: {why}"


class Verifier:
    """Verifies commits of one repository against one allowed-signers file's content."""

    def __init__(self, repo: GitRepo, allowed_signers: bytes) -> None:
        self._repo = repo
        self._allowed = allowed_signers
        self._known: dict[str, Signature] = {}

    def signatures(self, shas: Sequence[str]) -> list[Signature]:
        """Each commit's signature, in the order given."""
        missing = [s for s in dict.fromkeys(shas) if s not in self._known]
        if missing:
            for sig in self._verify(missing):
                self._known[sig.sha] = sig
        return [self._known[s] for s in shas]

    def unsigned(self, shas: Sequence[str]) -> list[Signature]:
        """The commits among `shas` not signed by an allowed key."""
        return [s for s in self.signatures(shas) if not s.good]

    def _verify(self, shas: Sequence[str]) -> list[Signature]:
        # git reads the allowed signers from a file: the control branch's blob, written out
        # for the one call. No other git configuration decides what is allowed.
        with tempfile.NamedTemporaryFile(prefix="clmgit-signers-") as f:
            f.write(self._allowed)
            f.flush()
            out = self._repo.run(
                "-c", f"gpg.ssh.allowedSignersFile={f.name}", "log", "--no-walk=unsorted",
                "--format=%H%x00%G?%x00%GS%x00%an <%ae>%x00", "--end-of-options", *shas,
                "--")
        fields = out.split("\0")
        return [Signature(fields[i].strip(), fields[i + 1], fields[i + 2], fields[i + 3])
                for i in range(0, len(fields) - 4, 4)]


def wants_signing(repo: GitRepo) -> bool:
    """Whether git is set to sign commits here (`commit.gpgSign`): `git commit-tree`, which
    clmgit commits with, does not read that setting itself."""
    out = repo.run("config", "--type=bool", "--get", "commit.gpgsign", ok=(0, 1)).strip()
    return out == "true"


def settings_at(repo: GitRepo, ref: str, where: str) -> Settings:
    """`signing:` of `clmgit.yaml` at `ref` of the control branch."""
    from clmgit.layout import SETTINGS_PATH, load_settings

    return parse_settings(load_settings(repo.read_file(ref, SETTINGS_PATH), where), where)


def verifier_at(repo: GitRepo, ref: str, settings: Settings, *, why: str,
                verify_in: GitRepo | None = None) -> Verifier:
    """A verifier with the allowed signers at `ref` for the commits of `verify_in` (default:
    `repo`, a config source's own repository otherwise); `why` (the setting that asks for
    signatures) completes the refusal when the file is missing."""
    data = repo.read_file(ref, settings.allowed_signers)
    if data is None:
        raise ConfigError(f"{why} asks for signed commits, but there is no "
                          f"{settings.allowed_signers} on the control branch; commit the "
                          "allowed signers there (git's allowed_signers format)")
    return Verifier(verify_in or repo, data)
