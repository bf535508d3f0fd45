"""The Typer app: the common options, the command groups mounted, and the one place where
errors become exit codes (docs/reference/exit-codes.md): 1 refused or user error (one line, no
traceback), 2 usage, 3 unexpected (traceback only with --verbose), 4 clusters failed, 5 skipped,
6 blocked, 130 interrupted (`clmgit.errors`)."""

from __future__ import annotations

import functools
import logging
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.main

from clmgit.cli import completion, convert, health, promotion, reconcile, report
from clmgit.cli.common import Settings
from clmgit.cli.helpstyle import CONTEXT_SETTINGS, Command, Group
from clmgit.cli.output import emit_error
from clmgit.cli.registry import registry_app
from clmgit.cli.sources import sources_app
from clmgit.errors import ClmgitError
from clmgit.logformat import LogFormat, stderr_line
from clmgit.machine import owned_heap
from clmgit.timestamps import start_clock

if TYPE_CHECKING:
    from clmgit.notify import Target

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain help: flags show no `<bool>` value, and help reads the same in CI logs as in a terminal.
    rich_markup_mode=None,
    cls=Group,
    context_settings=CONTEXT_SETTINGS,
    help="GitOps channel promotion and reconcile for fleets of Kubernetes clusters on AWS.",
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        sys.stdout.write(f"clmgit {version('clmgit')}\n")
        raise typer.Exit()


@app.callback()
def common(
    ctx: typer.Context,
    repo: Annotated[
        str, typer.Option(envvar="CLMGIT_REPO", help="Config repo: a path or git URL.")
    ] = ".",
    registry: Annotated[
        str | None,
        typer.Option(envvar="CLMGIT_REGISTRY",
                     help="Cluster registry: a clusters.yaml path or an http(s) URL."),
    ] = None,
    control_branch: Annotated[str, typer.Option(
        envvar="CLMGIT_CONTROL_BRANCH", help="The branch that holds channels/.")] = "main",
    verbose: Annotated[int, typer.Option(
        "--verbose", "-v", count=True,
        help="-v: clmgit's debug log and tracebacks of errors; -vv: also the libraries' "
             "(botocore's requests, urllib3, kubernetes), credentials always masked.")] = 0,
    log_format: Annotated[LogFormat, typer.Option(
        envvar="CLMGIT_LOG_FORMAT", show_envvar=True,
        help="text, or json: every line on stderr one JSON object (time, level, message; "
             "cluster and step where known).")] = LogFormat.text,
    no_notify: Annotated[bool, typer.Option(
        "--no-notify", help="Send none of the notifications clmgit.yaml's notify: asks for.")
    ] = False,
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_print_version,
                                          help="Print clmgit's version and exit.")] = False,
) -> None:
    ctx.obj = Settings(repo, registry, control_branch, verbose > 0)
    _set_up_logging(verbose, log_format)
    if not no_notify:
        _notify(ctx, ctx.obj)


def _notify(ctx: typer.Context, settings: Settings) -> None:
    """This command's notifications, sent while it runs and waited for (within their bound)
    when it ends."""
    from clmgit import events
    from clmgit.notify import Notifier

    notifier = Notifier(lambda: _notify_targets(settings))
    ctx.with_resource(events.listening(notifier))
    ctx.call_on_close(notifier.flush)


def _notify_targets(settings: Settings) -> tuple[Target, ...]:
    """The targets `notify:` in `clmgit.yaml` on the control branch lists."""
    from clmgit.layout import SETTINGS_PATH, load_settings
    from clmgit.notify import parse_notify

    ws = settings.ws
    where = f"{SETTINGS_PATH} on branch {ws.control_branch!r}"
    raw = load_settings(ws.repo.read_file(ws.control_sha, SETTINGS_PATH), where)
    return parse_notify(raw.get("notify"), where)


#: Libraries whose debug logs (a request dump each) only -vv shows.
_LIBRARIES = ("botocore", "boto3", "s3transfer", "urllib3", "kubernetes", "git", "asyncio",
              "apprise")


def _set_up_logging(verbose: int, fmt: LogFormat = LogFormat.text) -> None:
    """Warnings by default; -v adds clmgit's debug log, -vv every library's too. Whatever is
    emitted (botocore's, urllib3's and kubernetes' debug logs show request headers) passes
    through `LogRedactor`; `fmt` says how a line looks (`clmgit.logformat`)."""
    from clmgit import logformat
    from clmgit.redact import LogRedactor, environment_secrets

    logformat.current = fmt
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING)
    for handler in logging.getLogger().handlers:
        if type(handler) is logging.StreamHandler:  # basicConfig's (not a test's capture)
            handler.setFormatter(logformat.formatter(fmt))
    if verbose == 1:
        for name in _LIBRARIES:
            logging.getLogger(name).setLevel(logging.WARNING)
    if not verbose:  # a retried request is reported once, by clmgit, when the retries run out
        logging.getLogger("urllib3").setLevel(logging.ERROR)
    if verbose < 2:  # apprise names a target's host; clmgit.notify warns with the URL masked
        logging.getLogger("apprise").setLevel(logging.CRITICAL)
    redactor = LogRedactor(environment_secrets())
    for handler in logging.getLogger().handlers:
        for old in [f for f in handler.filters if isinstance(f, LogRedactor)]:
            handler.removeFilter(old)
        handler.addFilter(redactor)


for _group in (promotion.COMMANDS, reconcile.COMMANDS, health.COMMANDS, report.COMMANDS,
               convert.COMMANDS,
               completion.COMMANDS):
    for _name, _command in _group.items():
        app.command(_name, cls=Command)(_command)
app.add_typer(registry_app, name="registry")
app.add_typer(sources_app, name="sources")


@functools.cache
def _click_command() -> Callable[..., Any]:
    """The app as a click command, built once per process: building it reads the signature of
    every command, which a process that runs several commands (the tests) would repeat."""
    return typer.main.get_command(app)


def main() -> None:
    """Entry point: run the app and map errors to exit codes in this one place."""
    verbose = any(a == "--verbose" or (a.startswith("-v") and set(a[1:]) == {"v"})
                  for a in sys.argv[1:])
    try:
        start_clock()  # CLMGIT_NOW, if set, is when this command starts
        with owned_heap():
            _click_command()(prog_name="clmgit", standalone_mode=True)
    except ClmgitError as e:
        if verbose:
            _print_traceback()
        emit_error(str(e), exit_code=e.exit_code)
        sys.stderr.write(stderr_line("error", f"{e}", prefix="error: "))
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write(stderr_line("error", "interrupted"))
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - the last line of defence, exit code 3
        if verbose:
            _print_traceback()
        emit_error(f"internal error: {type(e).__name__}: {e}", exit_code=3)
        sys.stderr.write(stderr_line(
            "error", f"internal error: {type(e).__name__}: {e} (run with --verbose for a "
            "traceback)"))
        sys.exit(3)
    finally:
        sys.stdout.flush()


def _print_traceback() -> None:
    """The traceback of the error being handled, credentials hidden (an SDK's exception may
    carry a request's headers)."""
    from clmgit.redact import LogRedactor, environment_secrets

    sys.stderr.write(LogRedactor(environment_secrets()).hide(traceback.format_exc()))
