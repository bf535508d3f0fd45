"""`clmgit registry ...`: serve the Cluster Registry API, and move records between a
`clusters.yaml` and a server. Option parsing and messages only; the work is in the registry
package. Mounted by `clmgit.cli.main` as `registry`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clmgit.cli import output
from clmgit.cli.common import settings
from clmgit.cli.helpstyle import CONTEXT_SETTINGS, Command, Group
from clmgit.errors import RegistryError

if TYPE_CHECKING:
    from clmgit.httpd import Background
    from clmgit.registry.server.httpd import RegistryServer

registry_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, cls=Group, context_settings=CONTEXT_SETTINGS,
    help="Serve a Cluster Registry; import and export clusters.yaml.",
)

RegistryOpt = Annotated[
    str | None,
    typer.Option(
        "--registry", envvar="CLMGIT_REGISTRY", help="A clusters.yaml path or an http(s) URL."
    ),
]


@registry_app.command(cls=Command)
def serve(
    db: Annotated[
        str, typer.Option(envvar="CLMGIT_REGISTRY_DB", show_envvar=True,
                          help="sqlite:///PATH (embedded) or postgresql://USER@HOST/DB (with "
                               "a password: in the environment variable, not the command "
                               "line).")
    ] = "sqlite:///clmgit-registry.db",
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port to listen on.")] = 8099,
    metrics_port: Annotated[int | None, typer.Option(
        min=0, max=65535, envvar="CLMGIT_METRICS_PORT", show_envvar=True,
        help="Also serve /healthz, /readyz (503 while the database cannot be reached) and "
             "/metrics (Prometheus) on this port of the --host address, without a token.")
    ] = None,
) -> None:
    """Serve the Cluster Registry API; tokens from CLMGIT_REGISTRY_TOKEN (comma-separated)."""
    from clmgit.registry.http import TOKEN_ENV

    try:
        from clmgit.registry.server.httpd import RegistryServer
    except ModuleNotFoundError as e:  # the server's stack is an extra
        raise RegistryError(f"the registry server needs {e.name}, which is not installed: "
                            "pip install 'clmgit[server]'") from None

    tokens = [t.strip() for t in os.environ.get(TOKEN_ENV, "").split(",") if t.strip()]
    server = RegistryServer(db, tokens=tokens, host=host, port=port)
    served = None if metrics_port is None else _endpoints(server, host=host, port=metrics_port)
    try:
        server.listen()
        output.note(
            f"serving the cluster registry on {server.url} from {server.db.location}; "
            "Ctrl-C stops it"
        )
        server.serve_forever()
    finally:
        if served is not None:
            served.stop()


def _endpoints(server: RegistryServer, *, host: str, port: int) -> Background:
    """/healthz, /readyz and /metrics of `server`, its requests counted from now on."""
    from clmgit.endpoints import endpoints_app, serve_endpoints
    from clmgit.metrics import Metered, RegistryMetrics

    metrics = RegistryMetrics()
    server.app.add_middleware(Metered, metrics=metrics, routes=server.app.routes)

    def ready() -> str | None:
        try:
            with server.db.transaction() as tx:
                tx.one("SELECT 1")
        except RegistryError as e:
            return f"the database cannot be reached: {e}"
        return None

    app = endpoints_app(live=lambda: None, ready=ready, registry=metrics.registry)
    served = serve_endpoints(app, address=host, port=port)
    output.note(f"serving /healthz, /readyz and /metrics on port {served.port}")
    return served


@registry_app.command("import", cls=Command)
def import_(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A clusters.yaml in CLM's format.")],
    registry: RegistryOpt = None,
) -> None:
    """Create or update every record of FILE in the registry server, status included."""
    from clmgit.registry.file import FileRegistry
    from clmgit.registry.http import HttpRegistry

    spec = _spec(ctx, registry)
    if not spec.startswith(("http://", "https://")):
        raise RegistryError(f"import writes to a registry server; {spec} is not an http(s) URL")
    target = HttpRegistry(spec)
    clusters = FileRegistry(file).clusters()
    created = sum(target.put_cluster(c) for c in clusters)
    output.line(
        f"imported {len(clusters)} clusters into {target.location}: {created} created, "
        f"{len(clusters) - created} updated"
    )


@registry_app.command(cls=Command)
def export(
    ctx: typer.Context,
    registry: RegistryOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write here, not to stdout.")] = None,
) -> None:
    """Print every record of the registry as a clusters.yaml."""
    from clmgit.model import cluster_to_dict
    from clmgit.registry import open_registry
    from clmgit.registry.file import clusters_yaml

    clusters = open_registry(_spec(ctx, registry), default_dir=None).clusters()
    text = clusters_yaml([cluster_to_dict(c) for c in clusters])
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text)
        output.note(f"wrote {out}")


def _spec(ctx: typer.Context, registry: str | None) -> str:
    """`--registry` of this command, else the one given before `registry` (`clmgit --registry
    URL registry export`)."""
    spec = registry or settings(ctx).registry
    if spec:
        return spec
    raise RegistryError("no registry given: pass --registry FILE or URL")
