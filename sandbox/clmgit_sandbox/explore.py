"""`make sandbox`: the demo's world left running, to explore with kubectl, the AWS CLI and clmgit.

Starts moto, one Kubernetes API emulator (HTTPS, its own CA) with a node simulator per cluster,
and the demo's config repo with three clusters; runs `clmgit reconcile` once so the clusters
exist (stacks, nodes, manifests); then prints the lines to paste into another shell and waits.
Ctrl-C, SIGTERM or SIGHUP stops everything and removes the throw-away directory, at any moment.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from clmgit.model import parse_cluster
from clmgit_sandbox.aws import aws_environment, moto_server
from clmgit_sandbox.configrepo import example_records, init_example_repo
from clmgit_sandbox.demo import stop_like_ctrl_c
from clmgit_sandbox.fleet import LocalFleet
from clmgit_sandbox.kubectl import DEFAULT_MINORS, cached


def _kubectl_hint() -> str:
    """Where a kubectl is: on PATH, or one this project fetched from PyPI; else how to get one."""
    on_path = shutil.which("kubectl")
    if on_path:
        return f"# kubectl: {on_path}"
    for minor in reversed(DEFAULT_MINORS):
        found = cached(minor)
        if found is not None:
            return f"export PATH={shlex.quote(str(found.parent))}:$PATH   # kubectl 1.{minor}"
    return (f"# no kubectl found: `{shlex.quote(sys.executable)} -m clmgit_sandbox.kubectl` "
            "fetches one from PyPI")


def paste_lines(*, kubeconfig: Path, endpoint: str, cache: Path, repo: Path) -> list[str]:
    """The shell lines that point kubectl, the AWS CLI and clmgit at the sandbox."""
    aws = " ".join(f"{k}={shlex.quote(v)}" for k, v in aws_environment(endpoint).items())
    bin_dir = Path(sys.executable).parent
    return [
        f"export KUBECONFIG={shlex.quote(str(kubeconfig))}",
        f"export CLMGIT_KUBECONFIG={shlex.quote(str(kubeconfig))}",
        f"export {aws}",
        f"export CLMGIT_CACHE_DIR={shlex.quote(str(cache))}",
        f"export PATH={shlex.quote(str(bin_dir))}:$PATH",
        _kubectl_hint(),
        f"cd {shlex.quote(str(repo))}",
    ]


def main() -> int:
    stop_like_ctrl_c()  # at any moment, the first reconcile included
    tmp = Path(tempfile.mkdtemp(prefix="clmgit-sandbox-"))
    try:
        with moto_server() as endpoint:
            cache = tmp / "cache"
            os.environ["CLMGIT_CACHE_DIR"] = str(cache)
            builder = init_example_repo(tmp / "config")
            clusters = [parse_cluster(r, "sandbox") for r in example_records()]
            with LocalFleet(clusters, tmp / "kubeconfig") as fleet:
                print("Creating the clusters (clmgit reconcile)...", flush=True)
                done = subprocess.run(
                    [sys.executable, "-m", "clmgit", "--repo", str(builder.path), "reconcile",
                     "--kubeconfig", str(fleet.kubeconfig)],
                    stdout=subprocess.DEVNULL,
                )
                if done.returncode != 0:
                    print("sandbox: the first reconcile failed; stopping", file=sys.stderr)
                    return 1
                names = ", ".join(c.alias or c.local_id for c in clusters)
                print(f"\nThe sandbox is running: moto at {endpoint}, one Kubernetes API "
                      f"emulator per cluster ({names}; kubeconfig contexts by alias).\n"
                      "Paste these lines into another shell:\n")
                for line in paste_lines(kubeconfig=fleet.kubeconfig, endpoint=endpoint,
                                        cache=cache, repo=builder.path):
                    print(f"  {line}")
                print("\nThen try: kubectl get nodes; kubectl get deploy -A; "
                      "kubectl --context staging-1 get events -A; clmgit status; clmgit reconcile\n"
                      "Ctrl-C here stops the sandbox and removes its files.", flush=True)
                threading.Event().wait()  # until a signal raises KeyboardInterrupt
    except KeyboardInterrupt:
        pass  # the `with`s above have stopped the fleet and moto
    finally:
        _remove(tmp)
    print("Stopped; moto, the emulators and the repo are gone.")
    return 0


def _remove(tmp: Path, *, within: float = 10.0) -> None:
    """Remove the sandbox's directory, again while something still writes into it: a reconcile
    child killed by the signal leaves its worker processes to notice their parent is gone, and
    one may write a cache file after a first pass (which then leaves the directory behind)."""
    deadline = time.monotonic() + within
    shutil.rmtree(tmp, ignore_errors=True)
    while tmp.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
