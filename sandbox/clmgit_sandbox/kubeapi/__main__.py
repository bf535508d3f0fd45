"""Run the emulator standalone: `python -m clmgit_sandbox.kubeapi --port PORT --kubeconfig FILE`.

Writes a kubeconfig (one context per `--context`, default `sandbox`, each with its own user) with
a bearer token, then serves on 127.0.0.1 until interrupted (Ctrl-C, SIGTERM or SIGHUP). The token
is never printed. With `--nodes REGISTRY` the node simulator runs beside it for the cluster the
first context names, so that a node pool's instances in AWS (moto: `python -m
clmgit_sandbox.aws`) become Nodes and workloads get pods, as `make sandbox` has it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from clmgit.errors import ClmgitError
from clmgit.layout import LAYOUTS, Layout
from clmgit.model import Cluster
from clmgit_sandbox.kubeapi.server import KubeAPIServer

if TYPE_CHECKING:
    from clmgit_sandbox.kubelet import Kubelet


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m clmgit_sandbox.kubeapi", description="Kubernetes API emulator on 127.0.0.1."
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
    parser.add_argument(
        "--nodes",
        metavar="REGISTRY",
        help="run the node simulator for the cluster the first --context names (id or alias) in "
        "REGISTRY (a clusters.yaml or a Cluster Registry URL, read again on every pass); its "
        "instances are read from AWS as boto3 is configured (AWS_ENDPOINT_URL for moto)",
    )
    parser.add_argument("--layout", choices=LAYOUTS, default=LAYOUTS[0],
                        help="the config repo's layout, which names the node-pool stacks")
    return parser


def _record(registry: str, name: str) -> Callable[[], Cluster]:
    """Reads the cluster `name` (id or alias) from the registry, afresh on each call."""
    from clmgit.registry import open_registry

    def read() -> Cluster:
        for cluster in open_registry(registry, default_dir=None).clusters():
            if name in (cluster.id, cluster.alias):
                return cluster
        raise ClmgitError(f"no cluster {name!r} in the registry {registry}")

    return read


def _simulator(server: KubeAPIServer, registry: str, name: str, layout: str) -> Kubelet:
    """The node simulator, started; imported here so that the emulator alone starts quickly."""
    import boto3

    from clmgit.adapters.aws.autoscaling import AutoScalingPools
    from clmgit_sandbox.kubelet import Kubelet

    read = _record(registry, name)
    cluster = read()
    pools = AutoScalingPools(boto3.Session(region_name=cluster.region), layout=Layout(layout))
    return Kubelet(server, pools, cluster, refresh=read).start()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    contexts = args.contexts or ["sandbox"]
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    server = KubeAPIServer(port=args.port, token=args.token)
    try:
        server.start()
    except OSError as e:
        print(f"cannot listen on 127.0.0.1:{args.port}: {e.strerror}", file=sys.stderr)
        return 1
    kubelet = None
    try:
        if args.nodes:
            kubelet = _simulator(server, args.nodes, contexts[0], args.layout)
        path = server.write_kubeconfig(args.kubeconfig, context_names=contexts)
        nodes = f"; nodes of {contexts[0]} simulated" if kubelet else ""
        print(
            f"Kubernetes API emulator serving {server.url}; kubeconfig written to {path}{nodes}",
            flush=True,
        )
        stop.wait()
    except KeyboardInterrupt:
        pass
    except ClmgitError as e:
        print(f"python -m clmgit_sandbox.kubeapi: {e}", file=sys.stderr)
        return 1
    finally:
        if kubelet is not None:
            kubelet.stop()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
