"""`report`: the fleet at a glance as an HTML page, as Markdown, or served on 127.0.0.1.
Option parsing and output only; clmgit/report/ gathers and renders."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Annotated

import typer

from clmgit.cli import output
from clmgit.cli.common import settings


def report(
    ctx: typer.Context,
    html: Annotated[str | None, typer.Option(
        "--html", metavar="FILE", help="Write the page, one self-contained HTML file.")] = None,
    markdown: Annotated[bool, typer.Option(
        "--markdown", help="Print the report as Markdown (or write it to --out).")] = False,
    out: Annotated[str | None, typer.Option(
        "--out", metavar="FILE", help="With --markdown: write it to FILE, not stdout.")] = None,
    serve: Annotated[bool, typer.Option(
        "--serve", help="Serve the page read-only on 127.0.0.1, re-read on every load.")
                     ] = False,
    port: Annotated[int, typer.Option(min=0, max=65535, help="The port of --serve.")] = 8033,
    changes: Annotated[int, typer.Option(
        min=0, help="How many changes to cluster/ the matrix shows.")] = 20,
    history: Annotated[int, typer.Option(
        min=1, help="How many history entries the report shows.")] = 50,
) -> None:
    """The fleet at a glance: the pipeline of channels and groups with their pins and gates,
    where each recent change to cluster/ is, every cluster, and the history."""
    from clmgit.report.files import write_report
    from clmgit.report.gather import gather
    from clmgit.report.html import render_html
    from clmgit.report.markdown import render_markdown

    _check(html=html, markdown=markdown, out=out, serve=serve)
    common = settings(ctx)
    if serve:
        _serve(lambda: render_html(gather(common.open(), changes=changes,
                                          history_limit=history)), port=port)
        return
    made = gather(common.ws, changes=changes, history_limit=history)
    if html:
        path = write_report(html, render_html(made))
        output.note(f"wrote {path}")
    if markdown:
        text = render_markdown(made)
        if out:
            output.note(f"wrote {write_report(out, text)}")
        else:
            output.line(text.rstrip("\n"))


def _check(*, html: str | None, markdown: bool, out: str | None, serve: bool) -> None:
    if serve and (html or markdown or out):
        raise typer.BadParameter("--serve makes no file: leave out --html, --markdown and --out",
                                 param_hint="'--serve'")
    if out and not markdown:
        raise typer.BadParameter("--out is where --markdown goes; the page goes to --html FILE",
                                 param_hint="'--out'")
    if not (html or markdown or serve):
        raise typer.BadParameter("say what to make: --html FILE, --markdown or --serve",
                                 param_hint="'--html' / '--markdown' / '--serve'")


def _serve(page: Callable[[], str], *, port: int) -> None:
    from clmgit.report.serve import HOST, report_server

    server = report_server(page, port=port)
    # Ctrl-C and SIGTERM stop it, whatever the process inherited: a shell starts a background
    # job (`clmgit report --serve &`) with SIGINT ignored, and Python then leaves it so.
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    output.line(f"serving the report on http://{HOST}:{server.server_address[1]}/ "
                "(read-only; Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        output.note("stopped")
    finally:
        server.server_close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


COMMANDS: dict[str, Callable[..., None]] = {"report": report}
