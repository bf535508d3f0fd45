"""Run the emulator standalone: `python -m clmgit.sandbox.kubeapi --port PORT --kubeconfig FILE`.

Writes a kubeconfig (one context per `--context`, default `sandbox`) with a bearer token, then
serves on 127.0.0.1 until interrupted (Ctrl-C or SIGTERM). The token is never printed.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from clmgit.sandbox.kubeapi.server import KubeAPIServer


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m clmgit.sandbox.kubeapi", description="Kubernetes API emulator on 127.0.0.1."
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: a free one)")
    parser.add_argument("--kubeconfig", required=True, help="where to write the kubeconfig")
    parser.add_argument(
        "--context",
        action="append",
        dest="contexts",
        metavar="NAME",
        help="a context name for the kubeconfig (repeatable; default: sandbox)",
    )
    parser.add_argument("--token", help="bearer token to require (default: a random one)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server = KubeAPIServer(port=args.port, token=args.token)
    try:
        server.start()
    except OSError as e:
        print(f"cannot listen on 127.0.0.1:{args.port}: {e.strerror}", file=sys.stderr)
        return 1
    try:
        path = server.write_kubeconfig(args.kubeconfig, context_names=args.contexts or ["sandbox"])
        print(
            f"Kubernetes API emulator serving {server.url}; kubeconfig written to {path}",
            flush=True,
        )
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
