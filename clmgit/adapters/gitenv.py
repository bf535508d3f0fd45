"""The environment every git process clmgit starts runs in (docs/explanation/untrusted-input.md):
a repository is data, never code — its hooks, monitors, pagers, transports and credential
helpers are switched off by command-scope configuration that wins over its own `config`. And
the one form of a git failure, for every way clmgit runs git (`git.py`'s runner and
`gitobjects.py`'s object reader)."""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Mapping, Sequence

from clmgit.errors import GitError
from clmgit.redact import redact

#: Settings every git process runs with. They are given as command-scope configuration, which
#: wins over every file (the repository's own `config` included), and git passes them on to
#: the processes it starts itself (upload-pack, remote helpers).
HARDENING: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),  # a repository's hooks never run
    ("core.fsmonitor", "false"),      # nor a file-system monitor its config names
    ("core.pager", "cat"),
    # Transports: only these, whatever the repository's config says; `ext` (runs a command)
    # never, `file` only in the commands that talk to a remote (see `git_env`).
    ("protocol.allow", "never"),
    ("protocol.https.allow", "always"),
    ("protocol.ssh.allow", "always"),
    ("protocol.git.allow", "always"),
    ("protocol.ext.allow", "never"),
)
#: The commands that talk to a remote: the only ones that may use a transport at all.
TRANSPORT_COMMANDS = frozenset({"clone", "fetch", "push", "ls-remote", "pull"})


def git_env(args: Sequence[str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git process running `args`: git never asks on the terminal (a run
    in CI or under a progress display would wait for ever), reads no system-wide config, and
    runs with `HARDENING` over everything else. A command that talks to a remote may use the
    `file` transport — the remotes clmgit talks to are the operator's or a config source that
    `clmgit.layout.check_source_repo` admitted — and the operator's credential helpers (global
    and command scope); the helpers of a repository's own config are dropped. A command that
    does not talk to a remote cannot reach one (a lazy fetch of a partial clone, say)."""
    env = {**os.environ, **(extra or {}), "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    remote = git_command(args) in TRANSPORT_COMMANDS
    pairs = [*HARDENING, ("protocol.file.allow", "always" if remote else "never"),
             ("credential.helper", "")]  # an empty helper empties the list read so far
    if remote:
        pairs += [("credential.helper", helper) for helper in operator_credential_helpers()]
    count = env.get("GIT_CONFIG_COUNT", "")
    first = int(count) if count.isdigit() else 0  # the operator's own pairs stay, ours win
    for i, (key, value) in enumerate(pairs, first):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    env["GIT_CONFIG_COUNT"] = str(first + len(pairs))
    return env


@functools.cache
def operator_credential_helpers() -> tuple[str, ...]:
    """The credential helpers the operator configured (global config, or `GIT_CONFIG_*` and
    `-c` of the environment clmgit runs in), in order; looked up once, outside any repository.
    They go to git through the environment, never on a command line."""
    env = {**os.environ, "GIT_DIR": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_TERMINAL_PROMPT": "0"}
    try:
        proc = subprocess.run(["git", "config", "--show-scope", "--get-all", "credential.helper"],
                              capture_output=True, stdin=subprocess.DEVNULL, env=env)
    except OSError as e:
        raise GitError(f"cannot run git: {e.strerror}") from None
    helpers = []
    for line in proc.stdout.decode(errors="replace").splitlines():
        scope, _, value = line.partition("\t")
        if scope in ("global", "command"):
            helpers.append(value)
    return tuple(helpers)


def git_command(args: Sequence[str]) -> str:
    """The git command in `args`, past the options given to git itself."""
    rest = iter(args)
    for arg in rest:
        if arg in _OPTIONS_WITH_VALUE:
            next(rest, None)
        elif not arg.startswith("-"):
            return arg
    return ""


_OPTIONS_WITH_VALUE = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace"})


def failure(args: Sequence[str], code: int | None, stderr: bytes | str) -> str:
    """The one form of a git failure: the command, its exit code and what git said (one line,
    credentials in URLs hidden)."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    said = "; ".join(ln.strip() for ln in text.splitlines() if ln.strip())
    command = git_command(args)
    exit_code = "killed" if code is None or code < 0 else f"exit {code}"
    return redact(f"git {command} failed ({exit_code}): {said[:300] or 'no message'}")
